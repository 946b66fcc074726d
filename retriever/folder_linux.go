package retriever

import (
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// noFollowOpen: openat opens a file relative to a folder, following no link
// (O_NOFOLLOW; a link fails with ELOOP).
const noFollowOpen = true

// openNoFollow opens name in dir as openFile does, without following a link.
func openNoFollow(dir *os.File, name string) (fileReader, error) {
	for {
		fd, err := syscall.Openat(int(dir.Fd()), name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "openat", Path: name, Err: err}
		}
		return &rawFile{fd: fd, name: name}, nil
	}
}

// rawFile is a bare descriptor of a file an update reads.
type rawFile struct {
	fd   int
	name string
}

func (f *rawFile) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := syscall.Pread(f.fd, p[n:], off+int64(n))
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return n, &os.PathError{Op: "read", Path: f.name, Err: err}
		case m == 0:
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

func (f *rawFile) Stat() (fs.FileInfo, error) {
	st := new(syscall.Stat_t)
	for {
		err := syscall.Fstat(f.fd, st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "stat", Path: f.name, Err: err}
		}
		return &statInfo{name: f.name, st: st}, nil
	}
}

func (f *rawFile) Fd() uintptr { return uintptr(f.fd) }

func (f *rawFile) Close() error { return syscall.Close(f.fd) }

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

func (i *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & syscall.S_IFMT {
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
