//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestPollable: a pipe comes back non-blocking and read through the poller
// (a read deadline works, which only a polled file has), and still carries
// what is written; a regular file comes back as it was.
func TestPollable(t *testing.T) {
	// Raw descriptors, blocking, as a child's stdin is (os.Pipe's ends are
	// polled already).
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	blocking := os.NewFile(uintptr(fds[0]), "stdin")
	w := os.NewFile(uintptr(fds[1]), "writer")
	defer w.Close()
	if err := blocking.SetReadDeadline(time.Now()); err == nil {
		t.Fatal("a blocking descriptor took a deadline: the test does not start from what it means to")
	}
	p := pollable(blocking)
	if err := p.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatalf("pollable's pipe is not polled: %v", err)
	}
	if _, err := w.WriteString("Content-Length: 2\r\n\r\n{}"); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 23)
	if _, err := io.ReadFull(p, got); err != nil || string(got) != "Content-Length: 2\r\n\r\n{}" {
		t.Fatalf("read %q, %v", got, err)
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "file"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if pollable(f) != f {
		t.Fatal("a regular file was changed")
	}
}
