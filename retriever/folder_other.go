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

// rawFile is Linux's bare descriptor (folder_linux.go); never opened here.
type rawFile struct{}

// noFollowOpen: files are opened through the run folder's os.Root and each
// is checked (see folder).
const noFollowOpen = false

// lstatIn stats name in the opened folder r, following no link: the
// listing's stat of an entry it keeps, as a value.
func lstatIn(r *os.Root, _ *os.File, name string) (fileStat, error) {
	info, err := r.Lstat(name)
	if err != nil {
		return fileStat{}, err
	}
	return statOf(info), nil
}

func openNoFollow(*os.File, string, *rawFile) (fileReader, error) {
	return nil, errors.New("not supported")
}
