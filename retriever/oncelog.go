package retriever

// This file holds the index's once-logging: a problem or an unusual event
// told once a key (a file, a folder, a link, the watcher), not at every
// update that meets it again.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
)

// onceLog logs each key's first problem or event; a key forgotten is told
// again the next time.
type onceLog struct {
	log    *zap.Logger
	mu     sync.Mutex
	met    map[string]bool
	unread atomic.Bool // a file was warned about as unreadable
}

// warn logs a problem once a key (at WARN).
func (o *onceLog) warn(key, msg string, fields ...zap.Field) {
	if o.first(key) {
		o.log.Warn(msg, fields...)
	}
}

// note logs an unusual but harmless event once a key (at INFO).
func (o *onceLog) note(key, msg string, fields ...zap.Field) {
	if o.first(key) {
		o.log.Info(msg, fields...)
	}
}

// first reports whether key is met for the first time (or the first
// since it was forgotten), and marks it met.
func (o *onceLog) first(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.met == nil {
		o.met = map[string]bool{}
	}
	seen := o.met[key]
	o.met[key] = true
	return !seen
}

// readable forgets an unreadable file's WARN, so that it is logged again if
// the file becomes unreadable again.
func (o *onceLog) readable(rel string) {
	if !o.unread.Load() {
		return // no file was ever unreadable: nothing to forget
	}
	o.forget("unread:" + rel)
}

// forget makes key's next problem told again.
func (o *onceLog) forget(key string) {
	o.mu.Lock()
	delete(o.met, key)
	o.mu.Unlock()
}

// unreadable logs, once until the file is read again, why the file rel of
// the run at root (fsys) is left out.
func (o *onceLog) unreadable(fsys *os.Root, root, rel string, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		// Deleted since it was found: a change like any other, not a WARN.
		o.note("vanished:"+rel, "a file vanished between its stat and its read; its evidence is dropped", zap.String("file", rel))
		return
	}
	if info, lerr := fsys.Lstat(rel); lerr == nil && info.Mode()&fs.ModeSymlink != 0 {
		// Replaced by a link since it was listed (os.Root refuses one that
		// leads out of the run): reported as the walk reports links, once.
		o.warnLink(root, rel)
		return
	}
	o.unread.Store(true)
	o.warn("unread:"+rel, "cannot read a file; it is left out until it can be read", zap.String("file", rel), zap.Error(err))
}

// warnLink reports a link rel below the run folder root whose target lies
// outside it.
func (o *onceLog) warnLink(root, rel string) {
	abs := filepath.Join(root, filepath.FromSlash(rel))
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		o.log.Debug("skipped a link that does not resolve", zap.String("link", rel), zap.Error(err))
		return
	}
	if target == root || strings.HasPrefix(target, root+string(filepath.Separator)) {
		o.log.Debug("skipped a link", zap.String("link", rel))
		return
	}
	o.warn("link:"+rel, "skipped a link that points outside the run folder", zap.String("link", rel), zap.String("target", target))
}

// scanLog is the log-once as discovery reports through it (runfs.ScanLog).
type scanLog struct{ o *onceLog }

func (l scanLog) Warn(key, msg string, fields ...zap.Field) { l.o.warn(key, msg, fields...) }
func (l scanLog) Note(key, msg string, fields ...zap.Field) { l.o.note(key, msg, fields...) }
func (l scanLog) WarnLink(root, rel string)                 { l.o.warnLink(root, rel) }
