package persist

// This file tells the mapping guard's check whether a watched blob file may
// have changed since its last look, on Linux: one inotify instance per
// guard, a watch for IN_MODIFY on each open file (a truncate, ftruncate or
// open with O_TRUNC queues it before the call returns, whoever makes it),
// read without blocking. An empty queue is one failed read, where the sizes'
// fstats cost some microseconds a request on a 1 GB run (issue 33). Where a
// watch cannot be had (no inotify, the per-user limits reached, a watch lost),
// every check stats every file, as without it.

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// cutWatch is the guard's inotify instance; its zero value has none yet.
// The guard's mu is held around each method.
type cutWatch struct {
	fd      int  // the instance, valid when open
	open    bool // fd was made
	refused bool // stat every time: no instance, or a file not watched
	buf     []byte
}

// add watches f's file for a change of its content or size.
func (c *cutWatch) add(f *os.File) {
	if c.refused {
		return
	}
	if !c.open {
		fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
		if err != nil {
			c.refused = true
			return
		}
		c.fd, c.open, c.buf = fd, true, make([]byte, 4096)
	}
	// The descriptor's own file, not its path's: a blob renamed over since
	// the open would leave the path's watch on another file.
	conn, err := f.SyscallConn()
	if err != nil {
		c.refused = true
		return
	}
	var werr error
	if err := conn.Control(func(fd uintptr) {
		_, werr = syscall.InotifyAddWatch(c.fd, "/proc/self/fd/"+strconv.Itoa(int(fd)), syscall.IN_MODIFY)
	}); err != nil || werr != nil {
		c.refused = true
	}
}

// changed reports whether a watched file may have changed since the last
// call, and empties the queue: the caller stats every file after a true.
func (c *cutWatch) changed() bool {
	if c.refused || !c.open {
		return true
	}
	n, err := syscall.Read(c.fd, c.buf)
	if err == syscall.EAGAIN {
		return false
	}
	for err == nil && n > 0 {
		c.lost(c.buf[:n])
		n, err = syscall.Read(c.fd, c.buf)
	}
	if err != nil && err != syscall.EAGAIN && err != syscall.EINTR {
		c.refused = true // the instance is broken: stat every time
	}
	return true
}

// lost marks the watch refused when events says a watch was dropped (its
// file's last link gone, or the queue overflowed): a later change of that
// file would raise nothing.
func (c *cutWatch) lost(events []byte) {
	for len(events) >= syscall.SizeofInotifyEvent {
		ev := (*syscall.InotifyEvent)(unsafe.Pointer(&events[0]))
		if ev.Mask&(syscall.IN_IGNORED|syscall.IN_Q_OVERFLOW) != 0 {
			c.refused = true
		}
		events = events[min(len(events), syscall.SizeofInotifyEvent+int(ev.Len)):]
	}
}

// refuse makes every later check stat every file.
func (c *cutWatch) refuse() { c.refused = true }

func (c *cutWatch) close() {
	if c.open {
		syscall.Close(c.fd)
	}
	*c = cutWatch{}
}
