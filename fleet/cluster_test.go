package fleet

// This file holds the tests' VictoriaLogs cluster (scripts/victorialogs.sh:
// 2 storage nodes and a front on loopback) and the helpers that ship a run
// into it.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"runls/masking"
	"runls/retriever"
)

// vlBinary is the built VictoriaLogs, or why there is none.
var vlBinary, vlMissing string

func TestMain(m *testing.M) {
	out, err := exec.Command("bash", "scripts/victorialogs.sh", "build").Output()
	if err != nil {
		vlMissing = fmt.Sprintf("VictoriaLogs could not be built here (Go cannot fetch or build it): %v", err)
		if ee, ok := err.(*exec.ExitError); ok {
			vlMissing += ": " + strings.TrimSpace(string(ee.Stderr))
		}
	} else {
		vlBinary = strings.TrimSpace(string(out))
	}
	os.Exit(m.Run())
}

// cluster is a running VictoriaLogs cluster.
type cluster struct {
	dir   string
	front string
	env   map[string]string
}

// startCluster starts a cluster for t (frontFlags go to the front node),
// stopped when t ends; t is skipped, with the reason, where VictoriaLogs
// cannot be built.
func startCluster(t *testing.T, frontFlags ...string) *cluster {
	t.Helper()
	if vlMissing != "" {
		t.Skip(vlMissing)
	}
	dir := t.TempDir()
	args := append([]string{"scripts/victorialogs.sh", "start", dir}, frontFlags...)
	out, err := exec.Command("bash", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("start the cluster: %v\n%s", err, out)
	}
	c := &cluster{dir: dir, env: map[string]string{}}
	t.Cleanup(func() { _ = exec.Command("bash", "scripts/victorialogs.sh", "stop", dir).Run() })
	f, err := os.Open(filepath.Join(dir, "cluster.env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		c.env[k] = v
	}
	c.front = c.env["FRONT"]
	return c
}

// kill stops one of the cluster's processes (FRONT, STORAGE1, STORAGE2) by its PID.
func (c *cluster) kill(t *testing.T, name string) {
	t.Helper()
	var pid int
	if _, err := fmt.Sscan(c.env[name+"_PID"], &pid); err != nil {
		t.Fatalf("no PID of %s", name)
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release() // its pidfd, on Linux
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100 && p.Signal(syscall.Signal(0)) == nil; i++ {
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *cluster) store(t *testing.T) *VictoriaLogs {
	t.Helper()
	v, err := NewVictoriaLogs(c.front)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// openRun opens a run folder as runls search --mask [--interpreter] does.
func openRun(t *testing.T, root string, mask bool, rules string) *retriever.Index {
	t.Helper()
	opts := retriever.Options{Root: root}
	if mask {
		real, err := filepath.EvalSymlinks(root)
		if err != nil {
			t.Fatal(err)
		}
		opts.Masker = masking.HidingOutside(real)
	}
	if rules != "" {
		in, err := retriever.LoadInterpreter(rules)
		if err != nil {
			t.Fatal(err)
		}
		opts.Interpreter = in
	}
	ix, err := retriever.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// shipRun ships a run under id and waits until the store holds it all.
func shipRun(t *testing.T, st Store, root, id string, mask bool, rules string) Summary {
	t.Helper()
	ctx := context.Background()
	ix := openRun(t, root, mask, rules)
	sum, err := Ship(ctx, st, ix, ShipOptions{Run: id, StateFile: filepath.Join(t.TempDir(), "state.json")})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckHeld(ctx, st, map[string]int64{id: sum.Held}, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	return sum
}

// testingIndex is an index opened without a *testing.T (a child process,
// a poll), masked as ship masks by default.
type testingIndex struct{ *retriever.Index }

func openForChild(root string) (*testingIndex, error) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	ix, err := retriever.Open(context.Background(), retriever.Options{Root: root, Masker: masking.HidingOutside(real)})
	if err != nil {
		return nil, err
	}
	return &testingIndex{ix}, nil
}

// reqOf is a request that finds records of conv-1 in episode-2.
func reqOf(q string) retriever.Request {
	return retriever.Request{Query: q, TopK: 10, Episode: "episode-2", Conversation: "conv-1"}
}
