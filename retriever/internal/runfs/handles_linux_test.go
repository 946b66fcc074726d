package runfs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A read through Handles leaves the file's access time as it was, where a
// plain read of the same file system updates it (relatime: an access time
// before the modification time is written at the next read).
func TestHandlesKeepAccessTime(t *testing.T) {
	dir := t.TempDir()
	old, mtime := time.Now().Add(-48*time.Hour).Truncate(time.Second), time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, name := range []string{"plain.log", "handle.log"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("a line\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, mtime); err != nil {
			t.Fatal(err)
		}
	}
	atime := func(name string) time.Time {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return time.Unix(info.Sys().(*syscall.Stat_t).Atim.Unix())
	}
	if _, err := os.ReadFile(filepath.Join(dir, "plain.log")); err != nil {
		t.Fatal(err)
	}
	if atime("plain.log").Equal(old) {
		t.Skip("this file system updates no access time on a read (noatime)")
	}

	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	info, err := os.Stat(filepath.Join(dir, "handle.log"))
	if err != nil {
		t.Fatal(err)
	}
	dev, ino := FileID(info)
	hs := NewHandles(4)
	h, err := hs.Acquire(root, "handle.log", dev, ino)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := h.F.ReadAt(buf, 2); err != nil || string(buf) != "line" {
		t.Fatalf("read %q, %v", buf, err)
	}
	hs.Release(h)
	hs.CloseAll()
	if got := atime("handle.log"); !got.Equal(old) {
		t.Errorf("access time %v after a read through a handle, want %v as it was", got, old)
	}
}
