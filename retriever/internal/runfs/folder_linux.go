package runfs

import (
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// FileCtime is a file's inode change time (unix ns): a rewrite that set
// the modification time back still moves it.
func FileCtime(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}

// NoFollowOpen: openat opens a file relative to a folder, following no link
// (O_NOFOLLOW; a link fails with ELOOP).
const NoFollowOpen = true

// noATime opens a file without updating its access time (the owner's
// right, EPERM for another's file): the read-back's handles (handles.go).
const noATime = syscall.O_NOATIME

// OpenNoFollow opens name in dir as openFile does, without following a link,
// into f: a worker's one RawFile, reused from file to file (closed before
// the next open), so that a file's open allocates nothing.
func OpenNoFollow(dir *os.File, name string, f *RawFile) (FileReader, error) {
	for {
		fd, err := syscall.Openat(int(dir.Fd()), name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "openat", Path: name, Err: err}
		}
		*f = RawFile{fd: fd}
		f.info.name = name
		return f, nil
	}
}

// RawFile is a bare descriptor of a file an update reads. Its stat is kept
// in it, so that an open and its fstat cost one object, not three (a file's
// read allocates little else: at 100,000 small files each object counts).
type RawFile struct {
	fd   int
	info statInfo // its name, and the last Stat
	st   syscall.Stat_t
}

func (f *RawFile) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := syscall.Pread(f.fd, p[n:], off+int64(n))
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return n, &os.PathError{Op: "read", Path: f.info.name, Err: err}
		case m == 0:
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

// Stat returns the file's stat, valid until the next Stat of f: a new
// stat overwrites it.
func (f *RawFile) Stat() (fs.FileInfo, error) {
	for {
		err := syscall.Fstat(f.fd, &f.st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "stat", Path: f.info.name, Err: err}
		}
		f.info.st = &f.st
		return &f.info, nil
	}
}

func (f *RawFile) Fd() uintptr { return uintptr(f.fd) }

func (f *RawFile) Close() error { return syscall.Close(f.fd) }

// statInfo is an fs.FileInfo of a stat.
type statInfo struct {
	name string
	st   *syscall.Stat_t
}

func (i *statInfo) Name() string       { return i.name }
func (i *statInfo) Size() int64        { return i.st.Size }
func (i *statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Sec, i.st.Mtim.Nsec) }
func (i *statInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i *statInfo) Sys() any           { return i.st }

func (i *statInfo) Mode() fs.FileMode { return modeOf(i.st.Mode) }

// modeOf is the fs.FileMode of a stat's mode bits.
func modeOf(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	}
	return m
}
