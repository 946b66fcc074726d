package retriever

// This file holds the index's once-logging: a problem or an unusual event
// told once a key (a file, a folder, a link, the watcher), not at every
// update that meets it again.

import "go.uber.org/zap"

// warnOnce logs a problem once a key (at WARN).
func (ix *Index) warnOnce(key, msg string, fields ...zap.Field) {
	if ix.firstTime(key) {
		ix.log.Warn(msg, fields...)
	}
}

// noteOnce logs an unusual but harmless event once a key (at INFO).
func (ix *Index) noteOnce(key, msg string, fields ...zap.Field) {
	if ix.firstTime(key) {
		ix.log.Info(msg, fields...)
	}
}

// firstTime reports whether key is met for the first time (or the first
// since it was forgotten), and marks it met.
func (ix *Index) firstTime(key string) bool {
	ix.warnedMu.Lock()
	defer ix.warnedMu.Unlock()
	seen := ix.warned[key]
	ix.warned[key] = true
	return !seen
}
