package runfs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func newTestProbe(t *testing.T) *Probe {
	t.Helper()
	p, err := NewProbe()
	if err != nil {
		t.Skipf("no change probe here: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// pass is a slow pass that ends as ok says.
func pass(p *Probe, ok bool) { p.End(p.Begin(), ok) }

// TestProbeQuiet: the probe is quiet until a change in a folder it
// watches, of every kind the watcher sees; a pass's drain makes it quiet
// again once the pass ended well, and not while it is in flight.
func TestProbeQuiet(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	must(t, os.Mkdir(sub, 0o755))
	must(t, os.WriteFile(filepath.Join(sub, "a.txt"), []byte("a\n"), 0o644))
	p := newTestProbe(t)
	must(t, p.Add(".", dir))
	must(t, p.Add("sub", sub))
	if !p.Quiet() {
		t.Fatal("a probe with no change is not quiet")
	}
	for _, c := range []struct {
		name   string
		change func()
	}{
		{"append", func() { appendTo(t, filepath.Join(sub, "a.txt"), "b\n") }},
		{"new file", func() { must(t, os.WriteFile(filepath.Join(sub, "n.txt"), nil, 0o644)) }},
		{"new folder", func() { must(t, os.Mkdir(filepath.Join(dir, "new"), 0o755)) }},
		{"renamed in", func() {
			out := filepath.Join(t.TempDir(), "out.txt")
			must(t, os.WriteFile(out, []byte("x\n"), 0o644))
			must(t, os.Rename(out, filepath.Join(sub, "in.txt")))
		}},
		{"renamed within", func() { must(t, os.Rename(filepath.Join(sub, "in.txt"), filepath.Join(sub, "in2.txt"))) }},
		{"deleted", func() { must(t, os.Remove(filepath.Join(sub, "n.txt"))) }},
		{"mode changed", func() { must(t, os.Chmod(filepath.Join(sub, "a.txt"), 0o600)) }},
		{"truncated", func() { must(t, os.Truncate(filepath.Join(sub, "a.txt"), 0)) }},
	} {
		c.change()
		if p.Quiet() {
			t.Fatalf("%s: quiet after the change", c.name)
		}
		ticket := p.Begin()
		if p.Quiet() {
			t.Fatalf("%s: quiet while a pass is in flight", c.name)
		}
		p.End(ticket, true)
		if !p.Quiet() {
			t.Fatalf("%s: not quiet after a pass ended well", c.name)
		}
	}
	if n := p.Quiets(); n != 9 {
		t.Fatalf("Quiets = %d, want 9", n)
	}
}

// TestProbeFailedPass: what a failed pass drained is covered only by a
// pass begun after it that ends well; one begun before it, ending later,
// does not.
func TestProbeFailedPass(t *testing.T) {
	dir := t.TempDir()
	p := newTestProbe(t)
	must(t, p.Add(".", dir))
	early := p.Begin()
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), nil, 0o644))
	failing := p.Begin() // drains the write's event
	p.End(failing, false)
	p.End(early, true)
	if p.Quiet() {
		t.Fatal("quiet after a failed pass, covered only by one begun before it")
	}
	pass(p, false)
	if p.Quiet() {
		t.Fatal("quiet after a second failed pass")
	}
	pass(p, true)
	if !p.Quiet() {
		t.Fatal("not quiet after a pass begun after the failures ended well")
	}
}

// TestProbeFolderDeleted: a deleted folder's watch, dropped by the kernel,
// is forgotten at the next drain; removing it then is harmless, and a new
// folder at its path is watched anew.
func TestProbeFolderDeleted(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	must(t, os.Mkdir(sub, 0o755))
	p := newTestProbe(t)
	must(t, p.Add(".", dir))
	must(t, p.Add("sub", sub))
	must(t, os.Remove(sub))
	pass(p, true)
	if n := p.Watches(); n != 1 {
		t.Fatalf("%d watches after the folder was deleted, want 1", n)
	}
	p.Remove("sub")
	must(t, os.Mkdir(sub, 0o755))
	must(t, p.Add("sub", sub))
	pass(p, true)
	if !p.Quiet() {
		t.Fatal("not quiet")
	}
	must(t, os.WriteFile(filepath.Join(sub, "a.txt"), nil, 0o644))
	if p.Quiet() {
		t.Fatal("a write in the new folder was not seen")
	}
}

// TestProbeSharedWatch: two paths of one folder (a folder moved, watched
// under its new path before its old is dropped) share a watch descriptor;
// dropping one path keeps the watch for the other.
func TestProbeSharedWatch(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	must(t, os.Mkdir(a, 0o755))
	p := newTestProbe(t)
	must(t, p.Add("a", a))
	must(t, os.Rename(a, b))
	must(t, p.Add("b", b))
	p.Remove("a")
	pass(p, true)
	must(t, os.WriteFile(filepath.Join(b, "x.txt"), nil, 0o644))
	if p.Quiet() {
		t.Fatal("the moved folder's watch went with its old path")
	}
	p.Remove("b")
	pass(p, true)
	must(t, os.WriteFile(filepath.Join(b, "y.txt"), nil, 0o644))
	if !p.Quiet() {
		t.Fatal("a folder no path holds is still watched")
	}
}

// TestProbeOverflow: a queue that overflowed says so by an event of its
// own; the drain empties it.
func TestProbeOverflow(t *testing.T) {
	limit, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skipf("no inotify queue limit to reach: %v", err)
	}
	var n int
	if _, err := fmt.Sscan(string(limit), &n); err != nil || n > 1<<16 {
		t.Skipf("the queue limit %q is too large to reach in a test", limit)
	}
	dir := t.TempDir()
	p := newTestProbe(t)
	must(t, p.Add(".", dir))
	f := filepath.Join(dir, "f")
	for i := range n + 10 {
		// A create and a delete each time: identical events in a row are
		// merged into one.
		must(t, os.WriteFile(f, nil, 0o644))
		must(t, os.Remove(f))
		if i == n/2 {
			pass(p, true) // half drained: the rest still overflows
		}
	}
	if p.Quiet() {
		t.Fatal("quiet with an overflowed queue")
	}
	pass(p, true)
	if !p.Quiet() {
		t.Fatal("not quiet after the overflowed queue was drained")
	}
}

// TestProbeOff: a probe refused (or closed) is never quiet, and its
// watches are given back.
func TestProbeOff(t *testing.T) {
	dir := t.TempDir()
	p := newTestProbe(t)
	must(t, p.Add(".", dir))
	p.Refuse()
	if p.Quiet() || p.Watches() != 0 {
		t.Fatal("a refused probe is quiet or holds watches")
	}
	if err := p.Add(".", dir); err == nil {
		t.Fatal("a refused probe added a watch")
	}
	if p.Begin() != 0 {
		t.Fatal("a refused probe began a pass")
	}
	var none *Probe
	if none.Quiet() || none.Begin() != 0 || none.Add(".", dir) != nil {
		t.Fatal("no probe is quiet, or fails")
	}
	// A folder gone since it was listed leaves the probe on (its parent's
	// event is queued); any other failure turns it off.
	q := newTestProbe(t)
	if q.Add("missing", filepath.Join(dir, "missing")) == nil || !q.Quiet() {
		t.Fatal("a probe that could not watch a folder gone is off, or added a watch")
	}
	file := filepath.Join(dir, "file")
	must(t, os.WriteFile(file, nil, 0o644))
	if q.Add("file", file+"/x") == nil || !q.Quiet() {
		t.Fatal("a probe that could not watch a folder made a file is off, or added a watch")
	}
	if q.Off() {
		t.Fatal("a probe is off after folders gone")
	}
	if q.Add("long", "/"+strings.Repeat("x", 5000)) == nil || q.Quiet() || !q.Off() {
		t.Fatal("a probe that could not watch a folder is quiet")
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString(s)
	must(t, err)
	must(t, f.Close())
}

// TestEventsQuiet: a search skips the barrier only when nothing but the
// probe could hold a change: each thing pending says no on its own.
func TestEventsQuiet(t *testing.T) {
	for _, c := range []struct {
		name    string
		pending func(d *Discovery, b *Barrier)
	}{
		{"nothing", func(*Discovery, *Barrier) {}},
		{"another barrier", func(d *Discovery, _ *Barrier) { d.SetBarrier(&Barrier{changed: make(chan struct{})}) }},
		{"no barrier (events stopped)", func(d *Discovery, _ *Barrier) { d.NoEvents() }},
		{"no probe", func(d *Discovery, _ *Barrier) { d.SetProbe(nil) }},
		{"a barrier that failed", func(_ *Discovery, b *Barrier) { b.err = errProbeOff }},
		{"events lost", func(d *Discovery, _ *Barrier) { d.MarkAllDirty() }},
		{"an event recorded", func(d *Discovery, _ *Barrier) { d.Event("a/x.txt", false, false, nil) }},
		{"a change set taken by an update under way", func(d *Discovery, _ *Barrier) { d.Take() }},
		{"a folder polled", func(d *Discovery, _ *Barrier) { d.SetFolders(map[string]uint64{".": 1, "a": 2, "b": 3}) }},
		{"a file polled", func(d *Discovery, _ *Barrier) { d.PollFiles = map[string]bool{"a/x.txt": true}; d.Settle() }},
		{"a folder unreadable", func(d *Discovery, _ *Barrier) { d.unreadable = map[string]bool{"b": true}; d.Settle() }},
		{"a cancelled update's files", func(d *Discovery, _ *Barrier) { d.Leave([]string{"a/x.txt"}, nil, false); d.Settle() }},
		{"a cancelled update's episodes", func(d *Discovery, _ *Barrier) { d.Leave(nil, nil, true); d.Settle() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &Discovery{}
			p := newTestProbe(t)
			d.Start()
			d.SetAdder(func(string, uint64) error { return nil }, func(string) {})
			d.SetFolders(map[string]uint64{".": 1, "a": 2})
			d.Watch(".", 1)
			d.Watch("a", 2)
			b := &Barrier{changed: make(chan struct{})}
			d.SetBarrier(b)
			d.SetProbe(p)
			d.Take()
			d.Settle()
			if !d.Quiet(b) {
				t.Fatal("not quiet with nothing pending")
			}
			c.pending(d, b)
			if got, want := d.Quiet(b), c.name == "nothing"; got != want {
				t.Fatalf("Quiet = %v, want %v", got, want)
			}
		})
	}
}

// TestWatchDroppedWhileAdded: an event taken while a folder's watch is
// added, that may have dropped the new watch (the removal of the folder
// that was at its path before) or that removed or moved the folder or one
// above it (the folder listed is not at its path any more: a new folder,
// not counted as watched yet, so no watch of it was dropped), makes the
// folder not counted as watched: it stays polled, and the watch just added
// is dropped again (counted nowhere, no event would ever drop it). An
// event about another folder leaves the watch be.
func TestWatchDroppedWhileAdded(t *testing.T) {
	for _, c := range []struct {
		name      string
		rel       string
		older     bool   // rel was watched at an older inode
		gone      string // the event taken while rel's watch is added
		dropped   bool
		unwatched []string
		polled    int
	}{
		{"the older folder's removal", "a", true, "a", true, []string{"a", "a"}, 1},
		{"a new folder removed", "n", false, "n", true, []string{"n"}, 1},
		{"a new folder's parent moved", "p/n", false, "p", true, []string{"p/n"}, 1},
		{"the run folder", "n", false, ".", true, []string{".", "n"}, 2},
		{"another folder removed", "n", false, "m", false, nil, 0},
		{"a sibling with a common prefix", "n", false, "n2", false, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &Discovery{}
			d.Start()
			var unwatched []string
			unwatch := func(rel string) { unwatched = append(unwatched, rel) }
			d.SetAdder(func(rel string, ino uint64) error {
				if rel == c.rel && ino == 2 {
					d.Event(c.gone, true, true, unwatch)
				}
				return nil
			}, unwatch)
			d.SetFolders(map[string]uint64{".": 1, c.rel: 2})
			if !d.Watch(".", 1) {
				t.Fatal("the root was not watched")
			}
			if c.older && !d.Watch(c.rel, 3) {
				t.Fatal("a folder was not watched")
			}
			unwatched = nil
			if got := d.Watch(c.rel, 2); got == c.dropped || d.IsWatched(c.rel) == c.dropped {
				t.Fatalf("Watch = %v, watched %v; want %v", got, d.IsWatched(c.rel), !c.dropped)
			}
			if !slices.Equal(unwatched, c.unwatched) {
				t.Fatalf("unwatched %q, want %q", unwatched, c.unwatched)
			}
			if _, _, polled, _ := d.Counts(); polled != c.polled {
				t.Fatalf("%d folders polled, want %d", polled, c.polled)
			}
		})
	}
}

// TestWatchMovedAndReplaced: folder a moved to b and a new a made, both
// listed by one update before the loop takes a's move, b first (sorted
// before a). fsnotify keeps one watch a path and one a descriptor: b's add
// hands back a's watch and maps no path of b's, and the new a's add then
// takes that watch's path away, so the moved folder's events are dropped.
// So a's older watch goes (and b's with it, the same inode) before the new
// a is watched: b is not counted as watched, and is polled until an
// update watches it afresh.
func TestWatchMovedAndReplaced(t *testing.T) {
	d := &Discovery{}
	d.Start()
	var unwatched []string
	unwatch := func(rel string) { unwatched = append(unwatched, rel) }
	d.SetAdder(func(string, uint64) error { return nil }, unwatch)
	d.SetFolders(map[string]uint64{".": 1, "a": 2})
	d.Watch(".", 1)
	d.Watch("a", 2)
	if !d.Watch("b", 2) {
		t.Fatal("the moved folder was not watched")
	}
	if !d.Watch("a", 3) {
		t.Fatal("the new folder was not watched")
	}
	slices.Sort(unwatched)
	if d.IsWatched("b") || !slices.Equal(unwatched, []string{"a", "b"}) {
		t.Fatalf("unwatched %q; the moved folder still counts as watched: %v", unwatched, d.IsWatched("b"))
	}
	d.SetFolders(map[string]uint64{".": 1, "a": 3, "b": 2})
	if _, _, polled, _ := d.Counts(); polled != 1 {
		t.Fatalf("%d folders polled, want 1 (the moved one)", polled)
	}
	if !d.Watch("b", 2) || !d.IsWatched("b") {
		t.Fatal("the next update did not watch the moved folder afresh")
	}
	if _, _, polled, _ := d.Counts(); polled != 0 {
		t.Fatalf("%d folders polled, want 0", polled)
	}
}

// TestPassEndsOnItsProbe: a pass ends on the probe it began on, though
// another watcher's probe was set meanwhile: the new one's count of
// passes in flight is not taken down by it.
func TestPassEndsOnItsProbe(t *testing.T) {
	d := &Discovery{}
	first, second := newTestProbe(t), newTestProbe(t)
	d.SetProbe(first)
	pass := d.BeginPass()
	d.SetProbe(second)
	inFlight := d.BeginPass()
	pass.End(true)
	if !first.Quiet() {
		t.Fatal("the first probe's pass did not end on it")
	}
	if second.Quiet() {
		t.Fatal("the second probe is quiet with a pass in flight")
	}
	inFlight.End(true)
	if !second.Quiet() {
		t.Fatal("the second probe is not quiet once its pass ended")
	}
}

// TestUnwatchSharedInode: a folder moved within the run and watched under
// its new path before the old path's watch went shares the system's one
// watch of its inode; dropping the old path's drops both, so the new path
// is counted as watched no more, and is polled.
func TestUnwatchSharedInode(t *testing.T) {
	for _, how := range []string{"event", "sync"} {
		t.Run(how, func(t *testing.T) {
			d := &Discovery{}
			d.Start()
			d.SetAdder(func(string, uint64) error { return nil }, func(string) {})
			d.SetFolders(map[string]uint64{".": 1, "old": 2})
			d.Watch(".", 1)
			d.Watch("old", 2)
			d.SetFolders(map[string]uint64{".": 1, "new": 2})
			if !d.Watch("new", 2) {
				t.Fatal("the moved folder's new path was not watched")
			}
			var unwatched []string
			unwatch := func(rel string) { unwatched = append(unwatched, rel) }
			if how == "event" {
				d.Event("old", true, true, unwatch)
			} else {
				d.Sync(unwatch)
			}
			slices.Sort(unwatched)
			if d.IsWatched("new") || !slices.Equal(unwatched, []string{"new", "old"}) {
				t.Fatalf("unwatched %q; the new path still counts as watched: %v", unwatched, d.IsWatched("new"))
			}
			if _, _, polled, _ := d.Counts(); polled != 1 {
				t.Fatalf("%d folders polled, want 1 (the new path)", polled)
			}
		})
	}
}
