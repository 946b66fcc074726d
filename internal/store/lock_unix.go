//go:build unix

// This file holds the writer's lock: an exclusive flock on the entry's lock
// file, released by the kernel when the process dies (a kill -9 never leaves
// an entry locked).

package store

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes the exclusive lock on f without waiting; false when another
// open file description holds it (another process, or another Open in this
// one).
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		}
		return false, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
}

// sameFile reports whether f is still the file at path: a lock taken on a
// lock file that was removed (its entry cleared meanwhile) locks nothing.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// ownedByMe reports whether the file's owner is this process's user.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Getuid()
}

func lockSupported() error { return nil }
