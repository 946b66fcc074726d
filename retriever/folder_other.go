//go:build !linux

package retriever

import (
	"errors"
	"io/fs"
	"os"
)

// fileCtime is 0 where the inode's change time is not read: a rewrite that
// set the modification time back is then not seen, as following (§7).
func fileCtime(fs.FileInfo) int64 { return 0 }

// noFollowOpen: files are opened through the run folder's os.Root and each
// is checked (see folder).
const noFollowOpen = false

func openNoFollow(*os.File, string) (fileReader, error) {
	return nil, errors.New("not supported")
}
