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
	ix    *Index
	w     *fsnotify.Watcher
	probe *runfs.Probe // nil: none (off Linux, or none could be made)
}

// event records what an event may have changed, and reports whether the
// index may need an update.
func (wt *watcher) event(ev fsnotify.Event) bool {
	rel, ok := wt.rel(ev.Name)
	if !ok {
		return false
	}
	gone := ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	return wt.ix.fw.Event(rel, ev.Op&^fsnotify.Write != 0, gone, wt.unwatch)
}

// unwatch drops folder rel's watch, the watcher's and then the probe's
// (runfs.Probe: the probe watches at least what the watcher does). The
// kernel may have dropped them already.
func (wt *watcher) unwatch(rel string) {
	_ = wt.w.Remove(runfs.Abs(wt.ix.root, rel))
	wt.probe.Remove(rel)
}

// add watches the folder rel, listed at inode ino. A folder that cannot be
// watched (the inotify limit reached, a network file system) is polled,
// which is logged once.
func (wt *watcher) add(rel string, ino uint64) error {
	path := runfs.Abs(wt.ix.root, rel)
	err := runfs.Unwatchable(path)
	if err == nil {
		// The probe's watch first, so that whatever the watcher's raises,
		// the probe's raised too (runfs.Probe). A probe that cannot watch
		// the folder is off for good (but for a folder gone since its
		// listing, which its parent's event tells); the watcher goes on.
		if perr := wt.probe.Add(rel, path); perr != nil && wt.probe.Off() {
			wt.ix.once.note("watch:probe", "the change probe cannot watch every folder: every search waits for the watcher's barrier",
				zap.String("folder", rel), zap.Error(perr))
		}
		err = wt.addWatcher(path)
		if errors.Is(err, syscall.ENOSPC) && wt.probe.Watches() > 0 {
			// The probe's watches count against the same per-user limit:
			// the watcher's come first.
			wt.probe.Refuse()
			err = wt.addWatcher(path)
		}
	}
	if err != nil {
		wt.probe.Remove(rel)
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
		wt.unwatch(rel)
		return errors.New("replaced while a watch was added")
	}
	return nil
}

// addWatcher adds the watcher's watch of the folder at path (a test's
// hook may stand for it).
func (wt *watcher) addWatcher(path string) error {
	if add := wt.ix.fw.addWatch; add != nil {
		return add(wt.w, path)
	}
	return wt.w.Add(path)
}

// sync stops watching the folders that left the run folder (or were
// replaced): a folder moved keeps its watch, an inode's, under its old path,
// which a watch of its new path would reuse, reporting its events there.
func (wt *watcher) sync() {
	wt.ix.fw.Sync(wt.unwatch) // usually gone with its folder
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
