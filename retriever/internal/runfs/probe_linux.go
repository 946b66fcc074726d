package runfs

// This file holds the change probe's inotify instance (probe.go), on Linux.

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeMask is the mask of fsnotify's Add with its default operations
// (Create, Write, Remove, Rename, Chmod: backend_inotify.go's AddWith), the
// watcher's: the probe must get every event the watcher gets.
const probeMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE | unix.IN_DELETE_SELF |
	unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_MOVE_SELF | unix.IN_ATTRIB

// probeInstance is an inotify instance read without blocking, by no
// goroutine but the searches' drains.
type probeInstance struct{ fd int }

func newProbeInstance() (probeInstance, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return probeInstance{}, err
	}
	return probeInstance{fd: fd}, nil
}

// add watches the folder at path (what the path names now, as fsnotify's
// watch does: links followed) and returns its watch descriptor.
func (in probeInstance) add(path string) (int32, error) {
	wd, err := unix.InotifyAddWatch(in.fd, path, probeMask)
	if err != nil {
		return 0, err
	}
	return int32(wd), nil
}

func (in probeInstance) remove(wd int32) { _, _ = unix.InotifyRmWatch(in.fd, uint32(wd)) }

func (in probeInstance) close() { _ = unix.Close(in.fd) }

// queued is how many bytes of events wait in the queue: FIONREAD (TIOCINQ,
// its number on every Linux architecture), summed under the lock the
// events are queued under.
func (in probeInstance) queued() (int, error) {
	return unix.IoctlGetInt(in.fd, unix.TIOCINQ)
}

// drain reads the queue until it is empty, telling forget of each watch
// the kernel dropped (IN_IGNORED).
func (in probeInstance) drain(buf []byte, forget func(wd int32)) error {
	for {
		n, err := unix.Read(in.fd, buf)
		switch {
		case err == unix.EAGAIN:
			return nil
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		}
		for ev := buf[:n]; len(ev) >= unix.SizeofInotifyEvent; {
			e := (*unix.InotifyEvent)(unsafe.Pointer(&ev[0]))
			if e.Mask&unix.IN_IGNORED != 0 {
				forget(e.Wd)
			}
			ev = ev[min(len(ev), unix.SizeofInotifyEvent+int(e.Len)):]
		}
	}
}
