package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests run the test binary again as helper processes (a writer
// committing without end, readers reading), to show the store across
// processes: one writer, readers beside it, and a kill -9 in the middle of
// a write.

const helperEnv = "STORE_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode, os.Getenv("STORE_TEST_ROOT"), os.Getenv("STORE_TEST_RUN")))
	}
	os.Exit(m.Run())
}

// helper is a helper process's body. "churn": open the entry and, as its
// writer, commit generation after generation, saying each on stdout.
// "read": open it (read-only while another writes), read every new
// commit for a second, checking each whole, then say how many.
func helper(mode, rootDir, run string) int {
	root, err := OpenRoot(rootDir)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	e, err := root.Open(run, []byte("config"), Options{})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	if rep := e.Report(); rep != nil && rep.Dropped() {
		fmt.Println("dropped", rep)
	}
	fmt.Println("writable", e.Writable())
	switch mode {
	case "churn":
		var gen uint64
		if s, _ := e.Snapshot(); s != nil {
			gen, _ = genOf(s)
			s.Close()
		}
		for {
			gen++
			s, err := commitGenErr(e, gen, 3)
			if err != nil {
				fmt.Println("error", err)
				return 1
			}
			s.Close()
			fmt.Println("committed", gen)
		}
	case "read":
		n, err := readFor(e, time.Second)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println("read", n)
	}
	return 0
}

// readFor reads the entry's commits for d: each must be whole and no older
// than the one before. It gives how many it read.
func readFor(e *Entry, d time.Duration) (int, error) {
	var last uint64
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		s, err := e.Snapshot()
		if err != nil {
			return n, err
		}
		if s == nil {
			continue
		}
		gen, err := genOf(s)
		s.Close()
		if err != nil {
			return n, err
		}
		if gen < last {
			return n, fmt.Errorf("generation %d after %d", gen, last)
		}
		last = gen
		n++
	}
	return n, nil
}

type helperProc struct {
	cmd   *exec.Cmd
	lines *bufio.Scanner
}

func startHelper(t *testing.T, mode string, root *Root, run string) *helperProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "STORE_TEST_ROOT="+root.Path(), "STORE_TEST_RUN="+run)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helperProc{cmd: cmd, lines: bufio.NewScanner(out)}
	t.Cleanup(func() {
		cmd.Process.Kill()
		io.Copy(io.Discard, out)
		cmd.Wait()
	})
	return h
}

// line is the helper's next line of output.
func (h *helperProc) line(t *testing.T) string {
	t.Helper()
	if !h.lines.Scan() {
		t.Fatalf("helper ended: %v", h.lines.Err())
	}
	l := h.lines.Text()
	if strings.HasPrefix(l, "error") || strings.HasPrefix(l, "dropped") {
		t.Fatalf("helper: %s", l)
	}
	return l
}

// TestKillDuringWrite: a writer killed with SIGKILL at random points of its
// commits leaves an entry whose next open uses the last commit whole (or
// none), never a torn one.
func TestKillDuringWrite(t *testing.T) {
	run, root := testRun(t)
	r := rand.New(rand.NewPCG(5, 6))
	var last uint64
	midWrite := 0 // kills that left an unfinished write behind
	kills := 12
	if testing.Short() {
		kills = 4
	}
	for i := 0; i < kills; i++ {
		h := startHelper(t, "churn", root, run)
		if l := h.line(t); l != "writable true" {
			t.Fatalf("helper: %s", l)
		}
		var said uint64
		for said <= last {
			said = committed(t, h.line(t))
		}
		time.Sleep(time.Duration(r.IntN(20000)) * time.Microsecond)
		h.cmd.Process.Signal(syscall.SIGKILL)
		h.cmd.Wait()

		e, err := root.Open(run, []byte("config"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		rep := e.Report()
		if rep.Dropped() {
			t.Fatalf("kill %d: commit dropped: %v", i, rep)
		}
		if rep != nil && errors.Is(rep, errUnfinished) {
			midWrite++
		}
		s, err := e.Snapshot()
		if err != nil || s == nil {
			t.Fatalf("kill %d: no commit after generation %d said: %v", i, said, err)
		}
		gen := checkGen(t, s)
		if gen < said {
			t.Fatalf("kill %d: generation %d, the writer had said %d", i, gen, said)
		}
		last = gen
		s.Close()
		e.Close()
	}
	t.Logf("%d of %d kills during a write", midWrite, kills)
	if midWrite == 0 {
		t.Error("no kill landed during a write: the test shows nothing")
	}
}

func committed(t *testing.T, line string) uint64 {
	t.Helper()
	g, ok := strings.CutPrefix(line, "committed ")
	if !ok {
		t.Fatalf("helper: %s", line)
	}
	n, err := strconv.ParseUint(g, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestProcessesShareAnEntry: a writer process committing without pause,
// two reader processes and this one reading beside it: every commit read is
// whole and in order, no one deadlocks, the entry cannot be cleared under
// its writer, and none of the readers can write.
func TestProcessesShareAnEntry(t *testing.T) {
	run, root := testRun(t)
	w := startHelper(t, "churn", root, run)
	if l := w.line(t); l != "writable true" {
		t.Fatalf("writer: %s", l)
	}
	committed(t, w.line(t))
	go func() {
		for w.lines.Scan() {
		}
	}()
	readers := []*helperProc{startHelper(t, "read", root, run), startHelper(t, "read", root, run)}
	e := openEntry(t, root, run, Options{})
	if e.Writable() {
		t.Fatal("this process writes beside the writer")
	}
	if err := root.Remove(e.Key()); !errors.Is(err, ErrInUse) {
		t.Errorf("clear under the writer: %v", err)
	}
	n, err := readFor(e, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readers {
		if l := r.line(t); l != "writable false" {
			t.Fatalf("reader: %s", l)
		}
		if l := r.line(t); !strings.HasPrefix(l, "read ") {
			t.Fatalf("reader: %s", l)
		}
		if err := r.cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Error("read no commit")
	}
	w.cmd.Process.Signal(syscall.SIGKILL)
	w.cmd.Wait()
	if ok, err := e.Upgrade(); !ok || err != nil {
		t.Fatalf("no takeover after the writer died: %v", err)
	}
}
