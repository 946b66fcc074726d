package retriever

// This file holds a folder's listing as discovery takes it (discover.go):
// the cached one while the folder's time and identity say it is
// unchanged, else its names listed and each entry given a stat.

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"runls/retriever/internal/runfs"
)

// list returns folder r's listing (rel names it), the cached one when the
// folder's identity and time say it is unchanged; infos holds the stats of
// its files (d.files, in their order) when it was listed now, and is nil
// when it was not. With a watcher running, the folder is
// watched first; when its watch begins now, m.poll is set: what changed in
// it before raised no event.
func (sc *scan) list(r *os.Root, rel string, force bool, m *visitMode) (*dirState, []runfs.Stat, error) {
	ix := sc.ix
	info, err := r.Lstat(".")
	ix.fw.stats.Add(1)
	if err != nil {
		return nil, nil, err
	}
	dev, ino := runfs.FileID(info)
	mtime := info.ModTime().UnixNano()
	if ix.fw.Watch(rel, ino) {
		m.poll = true
	}
	old := sc.old[rel]
	if old != nil && !force && old.dev == dev && old.ino == ino && old.mtime == mtime && !runfs.Racy(mtime, old.listedAt) {
		return old, nil, nil
	}
	d := &dirState{dev: dev, ino: ino, mtime: mtime, listedAt: time.Now().UnixNano()}
	ix.fw.listings.Add(1)
	if ix.fw.listed != nil {
		ix.fw.listed(rel)
	}
	f, err := r.Open(".")
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// The names alone, then a stat of each entry kept, as a value: an
	// os.Root's folder reads a FileInfo object for every entry with its
	// listing (issue 13: at 100,000 files those objects lived on the heap
	// for the whole first indexing).
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, nil, err
	}
	level := levelOf(rel)
	type sub struct {
		name string
		ino  uint64
	}
	var subs []sub
	type file struct {
		name string
		st   runfs.Stat
	}
	var files []file
	child := func(name string) string {
		if rel == "." {
			return name
		}
		return rel + "/" + name
	}
	for _, name := range names {
		if level == levelRoot {
			if _, ok := EpisodeNumber(name); !ok {
				continue
			}
		}
		st, err := runfs.LstatIn(r, f, name)
		ix.fw.stats.Add(1)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone since the folder was read
		}
		if err != nil {
			return nil, nil, err
		}
		switch t := st.Mode.Type(); {
		case t&fs.ModeSymlink != 0:
			ix.once.warnLink(ix.root, child(name))
		case t.IsDir():
			subs = append(subs, sub{name, st.Ino})
		case t.IsRegular() && old != nil && contains(old.dirs, name):
			ix.once.note("replaced:"+child(name), "a folder was replaced by a file; the evidence of its files is dropped",
				zap.String("file", child(name)))
			if level == levelAgent {
				files = append(files, file{name, st})
			}
		case t.IsRegular() && level == levelAgent:
			files = append(files, file{name, st})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.name, b.name) })
	infos := make([]runfs.Stat, len(files)) // not nil: listed now
	if len(files) > 0 {
		d.files = make([]string, 0, len(files))
	}
	for i, f := range files {
		d.files = append(d.files, f.name)
		infos[i] = f.st
	}
	slices.SortFunc(subs, func(a, b sub) int { return strings.Compare(a.name, b.name) })
	for _, s := range subs {
		d.dirs = append(d.dirs, s.name)
		d.dirIDs = append(d.dirIDs, s.ino)
	}
	return d, infos, nil
}

// contains reports whether sorted holds s.
func contains(sorted []string, s string) bool {
	_, ok := slices.BinarySearch(sorted, s)
	return ok
}
