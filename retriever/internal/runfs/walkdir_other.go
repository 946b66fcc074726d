//go:build !linux

package runfs

// This file holds a folder as discovery's walk opens it where the walk goes
// through os.Root (walkdir_linux.go holds Linux's bare descriptors).

import "os"

// walkDir is a folder the walk opened.
type walkDir struct {
	r   *os.Root
	own bool // r is closed by close (not the run folder's own)
}

// openWalk opens folder rel of the run folder fsys, confined to it.
func openWalk(fsys *os.Root, rel string) (*walkDir, error) {
	if rel == "." {
		return &walkDir{r: fsys}, nil
	}
	r, err := fsys.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	return &walkDir{r: r, own: true}, nil
}

// openChild opens folder name of d.
func (d *walkDir) openChild(name string) (*walkDir, error) {
	r, err := d.r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return &walkDir{r: r, own: true}, nil
}

// stat is the folder's own stat.
func (d *walkDir) stat() (Stat, error) {
	info, err := d.r.Lstat(".")
	if err != nil {
		return Stat{}, err
	}
	return StatOf(info), nil
}

// names lists the folder's entries, unsorted.
func (d *walkDir) names() ([]string, error) {
	f, err := d.r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// lstat stats entry name of the folder, following no link.
func (d *walkDir) lstat(name string) (Stat, error) {
	info, err := d.r.Lstat(name)
	if err != nil {
		return Stat{}, err
	}
	return StatOf(info), nil
}

func (d *walkDir) close() error {
	if d.own {
		return d.r.Close()
	}
	return nil
}
