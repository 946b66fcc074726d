//go:build linux

package runfs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// TestRemoveStaleBarrierFolders: a barrier folder whose process was killed
// (kill -9: no Close ran) is removed by the next barrier made in the same
// temp folder; one whose process lives, one made a moment ago and another
// program's folder are left alone.
func TestRemoveStaleBarrierFolders(t *testing.T) {
	base := t.TempDir()
	old := time.Now().Add(-2 * staleAge)
	mkdir := func(name string, mtime time.Time) string {
		dir := filepath.Join(base, name)
		must(t, os.Mkdir(dir, 0o700))
		must(t, os.WriteFile(filepath.Join(dir, "barrier"), nil, 0o600))
		must(t, os.Chtimes(dir, mtime, mtime))
		return dir
	}
	young := mkdir(barrierPrefix+"young", time.Now())
	foreign := mkdir("runls-watch-foreign", old)
	heldHere := mkdir(barrierPrefix+"held", old)
	f, err := os.Open(filepath.Join(heldHere, "barrier"))
	must(t, err)
	defer f.Close()
	must(t, lockBarrier(f))

	// A live server in another process, then the same killed.
	cmd := exec.Command(os.Args[0], "-test.run=^TestBarrierProcess$")
	cmd.Env = append(os.Environ(), "RUNLS_TEST_BARRIER_PROCESS=1", "TMPDIR="+base)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the barrier process said nothing: %v", err)
	}
	live := strings.TrimSpace(strings.TrimPrefix(line, "barrier folder: "))
	if filepath.Dir(live) != base || !strings.HasPrefix(filepath.Base(live), barrierPrefix) {
		t.Fatalf("the barrier process made %q, want a %s folder in %s", live, barrierPrefix, base)
	}
	must(t, os.Chtimes(live, old, old))
	// This process's own by name, unlocked (made after the other process,
	// whose barrier removed what was not its own).
	mine := mkdir(barrierPrefix+strconv.Itoa(os.Getpid())+"-mine", old)

	removeStale(base, time.Now(), os.Getpid())
	for _, dir := range []string{young, foreign, heldHere, mine, live} {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("%s was removed while in use or not a stale barrier's: %v", filepath.Base(dir), err)
		}
	}

	must(t, cmd.Process.Kill())
	cmd.Wait()
	removeStale(base, time.Now(), os.Getpid())
	if _, err := os.Stat(live); !os.IsNotExist(err) {
		t.Fatalf("the killed process's barrier folder is still there (%v)", err)
	}
	for _, dir := range []string{young, foreign, heldHere, mine} {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("%s was removed: %v", filepath.Base(dir), err)
		}
	}
}

// TestBarrierProcess is TestRemoveStaleBarrierFolders's other process: it
// makes a barrier, says its folder and waits to be killed.
func TestBarrierProcess(t *testing.T) {
	if os.Getenv("RUNLS_TEST_BARRIER_PROCESS") == "" {
		t.Skip("run by TestRemoveStaleBarrierFolders")
	}
	w, err := fsnotify.NewWatcher()
	must(t, err)
	b, err := NewBarrier(t.TempDir(), w, func() {})
	must(t, err)
	os.Stdout.WriteString("barrier folder: " + filepath.Dir(b.Path()) + "\n")
	time.Sleep(time.Minute)
}
