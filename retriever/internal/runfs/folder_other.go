//go:build !linux

package runfs

import (
	"errors"
	"io/fs"
	"os"
)

// FileCtime is 0 where the inode's change time is not read: a rewrite that
// set the modification time back is then not seen, as following (§7).
func FileCtime(fs.FileInfo) int64 { return 0 }

// RawFile is Linux's bare descriptor (folder_linux.go); never opened here.
type RawFile struct{}

// NoFollowOpen: files are opened through the run folder's os.Root and each
// is checked (see folder).
const NoFollowOpen = false

// noATime: no flag keeps a read from updating a file's access time here.
const noATime = 0

func OpenNoFollow(*os.File, string, *RawFile) (FileReader, error) {
	return nil, errors.New("not supported")
}
