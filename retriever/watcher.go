package retriever

// This file holds the watcher: a running Watch's fsnotify watcher, which
// records what each event may have changed in the change set (watch.go)
// and adds and drops the folders' watches.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"

	"runls/retriever/internal/runfs"
)

// watcher is a running Watch's fsnotify watcher.
type watcher struct {
	ix *Index
	w  *fsnotify.Watcher
}

// event records what an event may have changed, and reports whether the
// index may need an update.
func (wt *watcher) event(ev fsnotify.Event) bool {
	rel, ok := wt.rel(ev.Name)
	if !ok {
		return false
	}
	gone := ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	return wt.ix.fw.Event(rel, ev.Op&^fsnotify.Write != 0, gone, func(w string) {
		_ = wt.w.Remove(runfs.Abs(wt.ix.root, w)) // the kernel may have dropped it already
	})
}

// add watches the folder rel, listed at inode ino. A folder that cannot be
// watched (the inotify limit reached, a network file system) is polled,
// which is logged once.
func (wt *watcher) add(rel string, ino uint64) error {
	path := runfs.Abs(wt.ix.root, rel)
	err := runfs.Unwatchable(path)
	if err == nil {
		if add := wt.ix.fw.addWatch; add != nil {
			err = add(wt.w, path)
		} else {
			err = wt.w.Add(path)
		}
	}
	if err != nil {
		fields := []zap.Field{zap.String("folder", rel), zap.Duration("every", pollInterval), zap.Error(err)}
		if errors.Is(err, syscall.ENOSPC) {
			fields = append(fields, zap.String("hint", "the inotify watch limit is reached: raise fs.inotify.max_user_watches"))
		}
		wt.ix.once.warn("watch:poll", "cannot watch folders of the run for changes: polling them instead", fields...)
		return err
	}
	// The watch is of what is at the path now: another folder than the
	// one listed is left to the next update (its parent's event names it).
	if info, err := os.Lstat(path); err != nil || !info.IsDir() || sameID(info, ino) != nil {
		_ = wt.w.Remove(path)
		return errors.New("replaced while a watch was added")
	}
	return nil
}

// sync stops watching the folders that left the run folder (or were
// replaced): a folder moved keeps its watch, an inode's, under its old path,
// which a watch of its new path would reuse, reporting its events there.
func (wt *watcher) sync() {
	wt.ix.fw.Sync(func(rel string) {
		_ = wt.w.Remove(runfs.Abs(wt.ix.root, rel)) // usually gone with its folder
	})
}

// sameID returns nil when info is the folder of inode ino.
func sameID(info os.FileInfo, ino uint64) error {
	if _, i := runfs.FileID(info); i != ino {
		return errors.New("replaced")
	}
	return nil
}

// rel returns the slash path of name relative to the run folder.
func (wt *watcher) rel(name string) (string, bool) {
	root := wt.ix.root
	name = filepath.Clean(name)
	if name == root {
		return ".", true
	}
	r, ok := strings.CutPrefix(name, root+string(os.PathSeparator))
	if !ok {
		return "", false
	}
	return filepath.ToSlash(r), true
}
