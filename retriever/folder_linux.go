package retriever

import (
	"os"
	"syscall"
)

// noFollowOpen: openat opens a file relative to a folder, following no link
// (O_NOFOLLOW; a link fails with ELOOP).
const noFollowOpen = true

// openNoFollow opens name in dir as openFile does, without following a link.
func openNoFollow(dir *os.File, name string) (*os.File, error) {
	fd, err := syscall.Openat(int(dir.Fd()), name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), dir.Name()+"/"+name), nil
}
