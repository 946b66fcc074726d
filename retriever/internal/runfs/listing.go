package runfs

// This file holds a folder's listing as discovery takes it (discover.go):
// the cached one while the folder's time and identity say it is
// unchanged, else its names listed and each entry given a stat.

import (
	"errors"
	"io/fs"
	"slices"
	"time"

	"go.uber.org/zap"
)

// list returns folder r's listing (rel names it), the cached one when the
// folder's identity and time say it is unchanged; infos holds the stats of
// its files (d.files, in their order) when it was listed now, and is nil
// when it was not. With a watcher running, the folder is
// watched first; when its watch begins now, m.poll is set: what changed in
// it before raised no event.
func (sc *Scan) list(r *walkDir, rel string, force bool, m *visitMode) (*dirState, []Stat, error) {
	info, err := r.stat()
	sc.d.Stats.Add(1)
	if err != nil {
		return nil, nil, err
	}
	dev, ino, mtime := info.Dev, info.Ino, info.Mtime
	if sc.d.Watch(rel, ino) {
		m.poll = true
	}
	old := sc.old[rel]
	if old != nil && !force && old.dev == dev && old.ino == ino && old.mtime == mtime && !Racy(mtime, old.listedAt) {
		return old, nil, nil
	}
	d := &dirState{dev: dev, ino: ino, mtime: mtime, listedAt: time.Now().UnixNano()}
	sc.d.Listings.Add(1)
	if sc.d.Listed != nil {
		sc.d.Listed(rel)
	}
	// The names alone, then a stat of each entry kept, as a value: an
	// os.Root's folder reads a FileInfo object for every entry with its
	// listing (issue 13: at 100,000 files those objects lived on the heap
	// for the whole first indexing).
	names, err := r.names()
	if err != nil {
		return nil, nil, err
	}
	level := levelOf(rel)
	if level == levelRoot {
		names = slices.DeleteFunc(names, func(name string) bool {
			_, ok := EpisodeNumber(name)
			return !ok
		})
	}
	// Sorted before the stats, so that the files and folders come out in
	// order: sorting the files with their stats moved 72 bytes a swap (a
	// twentieth of a reopen's instructions at 100,000 files). The files'
	// names are kept in the names' own array.
	slices.Sort(names)
	var infos []Stat
	files := names[:0]
	if level == levelAgent {
		infos = make([]Stat, 0, len(names))
	}
	child := func(name string) string {
		if rel == "." {
			return name
		}
		return rel + "/" + name
	}
	for _, name := range names {
		st, err := r.lstat(name)
		sc.d.Stats.Add(1)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone since the folder was read
		}
		if err != nil {
			return nil, nil, err
		}
		switch t := st.Mode.Type(); {
		case t&fs.ModeSymlink != 0:
			sc.log.WarnLink(sc.root, child(name))
		case t.IsDir():
			d.dirs = append(d.dirs, name)
			d.dirIDs = append(d.dirIDs, st.Ino)
		case t.IsRegular() && old != nil && contains(old.dirs, name):
			sc.log.Note("replaced:"+child(name), "a folder was replaced by a file; the evidence of its files is dropped",
				zap.String("file", child(name)))
			if level == levelAgent {
				files = append(files, name)
				infos = append(infos, st)
			}
		case t.IsRegular() && level == levelAgent:
			files = append(files, name)
			infos = append(infos, st)
		}
	}
	if len(files) > 0 {
		d.files = slices.Clip(files)
	}
	if infos == nil {
		infos = []Stat{} // not nil: listed now
	}
	return d, infos, nil
}

// contains reports whether sorted holds s.
func contains(sorted []string, s string) bool {
	_, ok := slices.BinarySearch(sorted, s)
	return ok
}
