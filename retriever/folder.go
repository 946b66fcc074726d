package retriever

import (
	"os"
	"strconv"
	"strings"
)

// folder is an opened folder of the run whose files a read job opens by
// name, so that each file costs one open, not one per element of its path.
//
// Where the system can open a file relative to a folder without following
// a link (Linux: openat with O_NOFOLLOW), the folder itself is opened and
// checked, by the kernel's name for it, to be at its own path in the run
// when the job begins and when it ends: a file opened by name in it, with no
// link followed, is then at its own path too (spec §1), and needs no check
// of its own. A job whose folder moved meanwhile is not used (see stillAt).
// Elsewhere, or when the check fails, files are opened through the run
// folder's os.Root and each is checked (atPath).
type folder struct {
	ix   *Index
	rel  string
	root *os.Root // nil: files are opened from the run folder
	file *os.File // the folder, at its path; nil: each file is checked
}

func (ix *Index) openFolder(rel string) *folder {
	d := &folder{ix: ix, rel: rel}
	if r, err := ix.fsys.OpenRoot(rel); err == nil {
		d.root = r
	}
	if noFollowOpen {
		if f, err := ix.fsys.Open(rel); err == nil {
			d.file = f
			if !d.stillAt() {
				f.Close()
				d.file = nil
			}
		}
	}
	return d
}

// open opens a file of the folder for reading (see openFile); checked tells
// that it is at its own path in the run, reached through no link. reuse is
// the worker's file to open it into, where the system opens it bare.
func (d *folder) open(name string, reuse *rawFile) (f fileReader, checked bool, err error) {
	if d.file != nil {
		f, err = openNoFollow(d.file, name, reuse)
		return f, err == nil, err
	}
	var of *os.File
	if d.root != nil {
		of, err = openFile(d.root, name)
	} else {
		of, err = openFile(d.ix.fsys, d.rel+"/"+name)
	}
	if err != nil {
		return nil, false, err
	}
	return of, false, nil
}

// stillAt reports whether the opened folder is at its own path in the run.
func (d *folder) stillAt() bool {
	if d.file == nil {
		return true // its files were checked one by one
	}
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(d.file.Fd())))
	return err == nil && p == d.ix.abs(d.rel) && !strings.HasSuffix(p, " (deleted)")
}

func (d *folder) close() {
	if d.root != nil {
		d.root.Close()
	}
	if d.file != nil {
		d.file.Close()
	}
}
