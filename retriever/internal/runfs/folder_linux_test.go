package runfs

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRawFile: a file opened by name in a folder reads and stats as the
// os package does, and a link in its place is not followed.
func TestRawFile(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("apple one\n"), 0o640))
	must(t, os.Symlink("f.txt", filepath.Join(dir, "link")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	d, err := os.Open(dir)
	must(t, err)
	defer d.Close()

	var rf, rl, rp RawFile
	f, err := OpenNoFollow(d, "f.txt", &rf)
	must(t, err)
	defer f.Close()
	got, err := f.Stat()
	must(t, err)
	want, err := os.Lstat(filepath.Join(dir, "f.txt"))
	must(t, err)
	gd, gi := FileID(got)
	wd, wi := FileID(want)
	if got.Mode() != want.Mode() || got.Size() != want.Size() || !got.ModTime().Equal(want.ModTime()) || gd != wd || gi != wi || got.IsDir() {
		t.Fatalf("stat %v %d %v %d/%d, want %v %d %v %d/%d", got.Mode(), got.Size(), got.ModTime(), gd, gi, want.Mode(), want.Size(), want.ModTime(), wd, wi)
	}
	buf := make([]byte, 20)
	n, err := f.ReadAt(buf, 6)
	if n != 4 || err != io.EOF || string(buf[:n]) != "one\n" {
		t.Fatalf("ReadAt: %d %v %q", n, err, buf[:n])
	}
	if _, err := OpenNoFollow(d, "link", &rl); err == nil {
		t.Fatal("a link was followed")
	}
	fifo, err := OpenNoFollow(d, "fifo", &rp) // does not block
	must(t, err)
	st, err := fifo.Stat()
	must(t, err)
	if st.Mode().IsRegular() || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("a FIFO's mode: %v", st.Mode())
	}
	fifo.Close()
}
