package runfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestWalkDirEqualsOS: a folder as the walk opens it (walkDir) says what
// the os package says: its own stat, its entries' names, each entry's stat
// (a file, a folder, a link not followed, a hard link, a FIFO), opened
// from its parent and by path from the run folder; a name gone is
// fs.ErrNotExist, and a child that is a file or a link to a folder is not
// opened as a folder (ENOTDIR).
func TestWalkDirEqualsOS(t *testing.T) {
	run := t.TempDir()
	dir := filepath.Join(run, "episode-1")
	must(t, os.Mkdir(dir, 0o750))
	must(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("apple one\n"), 0o640))
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o750))
	must(t, os.WriteFile(filepath.Join(dir, "sub", "g.txt"), []byte("pear\n"), 0o640))
	must(t, os.Symlink("f.txt", filepath.Join(dir, "link")))
	must(t, os.Symlink("sub", filepath.Join(dir, "dirlink")))
	must(t, os.Link(filepath.Join(dir, "f.txt"), filepath.Join(dir, "hard")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	fsys, err := os.OpenRoot(run)
	must(t, err)
	defer fsys.Close()

	top, err := openWalk(fsys, ".")
	must(t, err)
	defer top.close()
	byParent, err := top.openChild("episode-1")
	must(t, err)
	defer byParent.close()
	byPath, err := openWalk(fsys, "episode-1")
	must(t, err)
	defer byPath.close()

	info, err := os.Lstat(dir)
	must(t, err)
	want := []string{"dirlink", "f.txt", "fifo", "hard", "link", "sub"}
	for name, d := range map[string]*walkDir{"from its parent": byParent, "by path": byPath} {
		got, err := d.stat()
		must(t, err)
		if got != StatOf(info) {
			t.Errorf("%s: stat %+v, os.Lstat %+v", name, got, StatOf(info))
		}
		for range 2 { // listed twice: read from the start again
			names, err := d.names()
			must(t, err)
			slices.Sort(names)
			if !slices.Equal(names, want) {
				t.Errorf("%s: names %q, want %q", name, names, want)
			}
		}
		for _, entry := range want {
			got, err := d.lstat(entry)
			must(t, err)
			info, err := os.Lstat(filepath.Join(dir, entry))
			must(t, err)
			if got != StatOf(info) {
				t.Errorf("%s: lstat %s %+v, os.Lstat %+v", name, entry, got, StatOf(info))
			}
		}
		if _, err := d.lstat("gone"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: lstat of a name gone: %v, want fs.ErrNotExist", name, err)
		}
		sub, err := d.openChild("sub")
		must(t, err)
		if names, err := sub.names(); err != nil || !slices.Equal(names, []string{"g.txt"}) {
			t.Errorf("%s: sub's names %q %v", name, names, err)
		}
		sub.close()
		if _, err := d.openChild("gone"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: a folder gone: %v, want fs.ErrNotExist", name, err)
		}
		for _, notDir := range []string{"f.txt", "dirlink"} {
			if _, err := d.openChild(notDir); !errors.Is(err, syscall.ENOTDIR) {
				t.Errorf("%s: %s opened as a folder: %v, want ENOTDIR", name, notDir, err)
			}
		}
	}
}
