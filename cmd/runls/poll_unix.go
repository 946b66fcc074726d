//go:build unix

package main

import (
	"io/fs"
	"os"
	"syscall"
)

// pollable returns f read and written through Go's poller when it is a pipe
// or a socket (what editors give a language server), else f itself.
//
// A descriptor in blocking mode is read by a blocking system call, which
// holds its thread, and the scheduler's P with it, while it waits: a
// request's handler, handed to a worker goroutine just before the reader
// reads again, then waits for another thread to be woken to run it (tens of
// µs, more on a loaded machine), which a request to an unknown method,
// answered by the reader itself, does not. Through the poller the reader
// parks, and the handler runs at once on the same thread.
func pollable(f *os.File) *os.File {
	info, err := f.Stat()
	if err != nil || info.Mode()&(fs.ModeNamedPipe|fs.ModeSocket) == 0 {
		return f // a terminal or a file: left as it is
	}
	fd := f.Fd()
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		return f
	}
	// NewFile sees the descriptor non-blocking and hands it to the poller.
	return os.NewFile(fd, f.Name())
}
