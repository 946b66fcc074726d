package runfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// Another user's file, which O_NOATIME may not open (EPERM: only its owner,
// or a process with CAP_FOWNER, may ask), is opened plainly by a handle: a
// run folder another user wrote is read back as ever. As root (whom the
// flag's check lets through) the test runs itself again as nobody, from a
// copy of its binary that nobody may run, on a file root owns.
func TestHandlesOpenAnothersFile(t *testing.T) {
	if os.Getenv("RUNFS_ANOTHERS_FILE") != "" {
		readAnothersFile(t, os.Getenv("RUNFS_ANOTHERS_FILE"))
		return
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "root.log")
	if err := os.WriteFile(p, []byte("a line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		// Not root: a file root owns, which this process does not.
		readAnothersFile(t, "/etc/passwd")
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "runfs.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		if info, err := os.Stat(d); err == nil && info.Mode().Perm()&0o005 != 0o005 {
			if err := os.Chmod(d, info.Mode().Perm()|0o005); err != nil {
				t.Skipf("cannot open %s to another user: %v", d, err)
			}
			defer os.Chmod(d, info.Mode().Perm())
		}
	}
	cmd := exec.Command(bin, "-test.run", "^TestHandlesOpenAnothersFile$", "-test.v")
	cmd.Env = append(os.Environ(), "RUNFS_ANOTHERS_FILE="+p)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "read through a handle") {
		t.Fatalf("as nobody, the read was not made:\n%s", out)
	}
}

// readAnothersFile reads the first bytes of path, which another user owns,
// through a handle, and fails when the handle cannot open it.
func readAnothersFile(t *testing.T, path string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Skip(err)
	}
	if info.Sys().(*syscall.Stat_t).Uid == uint32(os.Geteuid()) {
		t.Fatalf("%s is this user's own", path)
	}
	if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOATIME, 0); err == nil {
		f.Close()
		t.Skipf("O_NOATIME opens %s here: nothing to fall back from", path)
	}
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	dev, ino := FileID(info)
	hs := NewHandles(4)
	defer hs.CloseAll()
	h, err := hs.Acquire(root, filepath.Base(path), dev, ino)
	if err != nil {
		t.Fatalf("a handle on another's file: %v", err)
	}
	defer hs.Release(h)
	buf := make([]byte, 1)
	if _, err := h.F.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: read through a handle", path)
}
