package runfs

import (
	"os"
	"strconv"
	"strings"
)

// Folder is an opened folder of the run whose files a read job opens by
// name, so that each file costs one open, not one per element of its path.
//
// Where the system can open a file relative to a folder without following
// a link (Linux: openat with O_NOFOLLOW), the folder itself is opened and
// checked, by the kernel's name for it, to be at its own path in the run
// when the job begins and when it ends: a file opened by name in it, with no
// link followed, is then at its own path too (spec §1), and needs no check
// of its own. A job whose folder moved meanwhile is not used (see stillAt).
// Elsewhere, or when the check fails, files are opened through the run
// folder's os.Root and each is checked (AtPath).
type Folder struct {
	root string   // the run folder's absolute path
	fsys *os.Root // the run folder
	rel  string
	dir  *os.Root // nil: files are opened from the run folder
	file *os.File // the folder, at its path; nil: each file is checked
}

// OpenFolder opens the folder rel of the run at root (fsys).
func OpenFolder(root string, fsys *os.Root, rel string) *Folder {
	d := &Folder{root: root, fsys: fsys, rel: rel}
	if r, err := fsys.OpenRoot(rel); err == nil {
		d.dir = r
	}
	if NoFollowOpen {
		if f, err := fsys.Open(rel); err == nil {
			d.file = f
			if !d.StillAt() {
				f.Close()
				d.file = nil
			}
		}
	}
	return d
}

// Open opens a file of the folder for reading (see OpenFile); checked tells
// that it is at its own path in the run, reached through no link. reuse is
// the worker's file to open it into, where the system opens it bare.
func (d *Folder) Open(name string, reuse *RawFile) (f FileReader, checked bool, err error) {
	if d.file != nil {
		f, err = OpenNoFollow(d.file, name, reuse)
		return f, err == nil, err
	}
	var of *os.File
	if d.dir != nil {
		of, err = OpenFile(d.dir, name)
	} else {
		of, err = OpenFile(d.fsys, d.rel+"/"+name)
	}
	if err != nil {
		return nil, false, err
	}
	return of, false, nil
}

// StillAt reports whether the opened folder is at its own path in the run.
func (d *Folder) StillAt() bool {
	if d.file == nil {
		return true // its files were checked one by one
	}
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(d.file.Fd())))
	return err == nil && p == Abs(d.root, d.rel) && !strings.HasSuffix(p, " (deleted)")
}

// Close closes the folder.
func (d *Folder) Close() {
	if d.dir != nil {
		d.dir.Close()
	}
	if d.file != nil {
		d.file.Close()
	}
}
