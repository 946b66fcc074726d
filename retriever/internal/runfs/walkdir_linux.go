package runfs

// This file holds a folder as discovery's walk opens it on Linux
// (walkDir): a bare descriptor, opened from its parent's with no link
// followed, whose own stat, listing and entries' stats go through it. A
// folder opened as an os.Root cost some fifteen system calls before its
// entries' stats (opened twice, a stat of ".", the poller's registration
// tried, the descriptor's mode set and cleared): some 44,000 calls in a
// walk of 100,000 files in 3,000 folders, beside the 100,000 stats. This
// costs five.

import (
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// walkDir is a folder the walk opened.
type walkDir struct {
	fd     int
	file   *os.File // the descriptor's owner, for a folder opened from the run folder by path
	listed bool     // its entries were read: read again from the start
	name   []byte   // a NUL-terminated name for a stat (lstat)
}

// openWalk opens folder rel of the run folder fsys, confined to it.
func openWalk(fsys *os.Root, rel string) (*walkDir, error) {
	r := fsys
	if rel != "." {
		var err error
		if r, err = fsys.OpenRoot(rel); err != nil {
			return nil, err
		}
		defer r.Close()
	}
	f, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	return &walkDir{fd: int(f.Fd()), file: f}, nil
}

// openChild opens folder name of d, following no link. A name that is no
// longer a folder, or is a link now, fails as ENOTDIR: the parent's next
// listing says what it is.
func (d *walkDir) openChild(name string) (*walkDir, error) {
	for {
		fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ELOOP:
			err = unix.ENOTDIR
		}
		if err != nil {
			return nil, &os.PathError{Op: "openat", Path: name, Err: err}
		}
		return &walkDir{fd: fd}, nil
	}
}

// stat is the folder's own stat.
func (d *walkDir) stat() (Stat, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstat(d.fd, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Stat{}, &os.PathError{Op: "fstat", Path: ".", Err: err}
		}
		return statOfUnix(&st), nil
	}
}

// direntBufs are the buffers the walk's workers read folders' entries into.
var direntBufs = sync.Pool{New: func() any { return new([8192]byte) }}

// names lists the folder's entries but "." and "..", unsorted.
func (d *walkDir) names() ([]string, error) {
	if d.listed {
		if _, err := unix.Seek(d.fd, 0, 0); err != nil {
			return nil, &os.PathError{Op: "seek", Path: ".", Err: err}
		}
	}
	d.listed = true
	buf := direntBufs.Get().(*[8192]byte)
	defer direntBufs.Put(buf)
	var names []string
	for {
		n, err := unix.Getdents(d.fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "getdents", Path: ".", Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}

// lstat stats entry name of the folder, following no link, with the
// walkDir's one buffer for the name (unix.Fstatat made a C string of each:
// an allocation a file).
func (d *walkDir) lstat(name string) (Stat, error) {
	if len(name) == 0 || containsNUL(name) {
		return Stat{}, &os.PathError{Op: "lstat", Path: name, Err: unix.EINVAL}
	}
	d.name = append(append(d.name[:0], name...), 0)
	var st unix.Stat_t
	for {
		_, _, errno := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(d.fd), uintptr(unsafe.Pointer(&d.name[0])), uintptr(unsafe.Pointer(&st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return Stat{}, &os.PathError{Op: "lstat", Path: name, Err: errno}
		}
		return statOfUnix(&st), nil
	}
}

func (d *walkDir) close() error {
	if d.file != nil {
		return d.file.Close()
	}
	return unix.Close(d.fd)
}

func statOfUnix(st *unix.Stat_t) Stat {
	return Stat{
		Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(),
		Dev: st.Dev, Ino: st.Ino, Nlink: uint64(st.Nlink), Mode: modeOf(st.Mode),
	}
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}
