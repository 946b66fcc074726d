package fleet

// Shipping (issue 32): idempotence across a kill -9, --follow, masking by
// default, what the store drops said, the bound on candidates.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"runls/internal/rungen"
	"runls/retriever"
)

// memStore is a Store in memory that ships only: it counts what a ship
// sends, the brute-force count the store's must equal.
type memStore struct {
	mu      sync.Mutex
	entries []Entry
	tallies map[string]*Tally // by batch
	tallied map[string]int64  // by run: records its tallies count
}

func (m *memStore) Ship(_ context.Context, b Batch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = append(m.entries, b.Entries...)
	if b.Tally != nil {
		if m.tallies == nil {
			m.tallies, m.tallied = map[string]*Tally{}, map[string]int64{}
		}
		t := &Tally{Groups: map[TallyKey]*TallyCounts{}, Terms: map[string]map[string]int64{}}
		for k, c := range b.Tally.Groups {
			cc := *c
			t.Groups[k] = &cc
		}
		for a, terms := range b.Tally.Terms {
			t.Terms[a] = maps.Clone(terms)
		}
		m.tallies[b.ID] = t
		m.tallied[b.Run] += t.Records()
	}
	return nil
}

func (m *memStore) Tallied(_ context.Context, _, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tallies[id] != nil, nil
}

func (m *memStore) Statistics(context.Context, StatsQuery) (Stats, error) {
	return Stats{}, errors.New("memStore ships only")
}

func (m *memStore) Candidates(context.Context, CandidateQuery) ([]Entry, string, error) {
	return nil, "", errors.New("memStore ships only")
}

func (m *memStore) Held(_ context.Context, runs []string) (map[string]Held, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]Held{}
	ids := map[string]map[string]bool{}
	for _, e := range m.entries {
		h := out[e.Run]
		h.Records++
		if ids[e.Run] == nil {
			ids[e.Run] = map[string]bool{}
		}
		if !ids[e.Run][e.RecordID] {
			ids[e.Run][e.RecordID] = true
			h.Unique++
		}
		out[e.Run] = h
	}
	for r, n := range m.tallied {
		h := out[r]
		h.Tallied = n
		out[r] = h
	}
	return out, nil
}

func (m *memStore) RecordIDs(_ context.Context, run, path string, offset int64) (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]bool{}
	for _, e := range m.entries {
		if e.Run == run && e.Path == path && e.Offset >= offset {
			out[e.RecordID] = true
		}
	}
	return out, nil
}

func (m *memStore) Paths(_ context.Context, run string) (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]bool{}
	for _, e := range m.entries {
		if e.Run == run {
			out[e.Path] = true
		}
	}
	return out, nil
}

func (m *memStore) Agents(context.Context, []string) ([]string, error) { return nil, nil }

// shipChildEnv makes the test binary a shipper (TestShipKilled's child).
const shipChildEnv = "RUNLS_FLEET_SHIP_CHILD"

func init() {
	if os.Getenv(shipChildEnv) == "" {
		return
	}
	// Child: ship RUN to URL under id with a state file, small batches.
	args := strings.Split(os.Getenv(shipChildEnv), "\n")
	url, root, id, state := args[0], args[1], args[2], args[3]
	st, err := NewVictoriaLogs(url)
	if err == nil {
		var ix *testingIndex
		ix, err = openForChild(root)
		if err == nil {
			_, err = Ship(context.Background(), st, ix.Index, ShipOptions{Run: id, StateFile: state, BatchBytes: 64 << 10})
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

// generated writes a run of size bytes for t.
func generated(t *testing.T, size int64, seed int64) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), fmt.Sprintf("run-%d", seed))
	if _, err := rungen.Generate(context.Background(), root, rungen.Options{Bytes: size, Seed: seed, Episodes: 3, Agents: 2, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	return root
}

// expectedRecords ships root into memory: the records a ship must store.
func expectedRecords(t *testing.T, root string, mask bool) int64 {
	t.Helper()
	m := &memStore{}
	sum, err := Ship(context.Background(), m, openRun(t, root, mask, ""), ShipOptions{Run: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if h := sum.Held; h != int64(len(m.entries)) || h == 0 {
		t.Fatalf("memory ship: held %d, sent %d", h, len(m.entries))
	}
	return sum.Held
}

func TestShipAgainSendsNothing(t *testing.T) {
	root := generated(t, 1<<20, 3)
	m := &memStore{}
	state := filepath.Join(t.TempDir(), "state.json")
	ctx := context.Background()
	first, err := Ship(ctx, m, openRun(t, root, true, ""), ShipOptions{Run: "r", StateFile: state})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Ship(ctx, m, openRun(t, root, true, ""), ShipOptions{Run: "r", StateFile: state})
	if err != nil {
		t.Fatal(err)
	}
	if again.Records != 0 || again.Held != first.Held {
		t.Errorf("shipping again sent %d records and holds %d, want 0 and %d", again.Records, again.Held, first.Held)
	}
	// Without the state file the store is asked what it holds.
	none, err := Ship(ctx, m, openRun(t, root, true, ""), ShipOptions{Run: "r"})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := m.Held(ctx, []string{"r"})
	if none.Records != 0 || h["r"].Records != h["r"].Unique {
		t.Errorf("shipping without a state sent %d records; the store holds %+v", none.Records, h["r"])
	}
}

func TestShipKilled(t *testing.T) {
	c := startCluster(t)
	st := c.store(t)
	root := generated(t, 6<<20, 11)
	want := expectedRecords(t, root, true)
	state := filepath.Join(t.TempDir(), "state.json")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		cmd := exec.Command(exe, "-test.run=XXX")
		cmd.Env = append(os.Environ(), shipChildEnv+"="+strings.Join([]string{c.front, root, "killed", state}, "\n"))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill it -9 once a few batches are in: one is likely in flight.
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(state); err == nil && strings.Count(string(b), `"records"`) > 3*(round+1) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	sum := shipWithState(t, st, root, "killed", state)
	if sum.Records == 0 {
		t.Fatal("the shipper finished before it was killed: nothing was left to ship again")
	}
	t.Logf("killed twice mid-way; the last ship sent %d of %d records", sum.Records, want)
	if sum.Held != want {
		t.Errorf("the state holds %d records, want %d", sum.Held, want)
	}
	if err := CheckHeld(context.Background(), st, map[string]int64{"killed": want}, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	h, err := st.Held(context.Background(), []string{"killed"})
	if err != nil {
		t.Fatal(err)
	}
	if h["killed"].Records != want || h["killed"].Unique != want {
		t.Errorf("the store holds %+v, want every one of %d records once", h["killed"], want)
	}
}

func shipWithState(t *testing.T, st Store, root, id, state string) Summary {
	t.Helper()
	sum, err := Ship(context.Background(), st, openRun(t, root, true, ""), ShipOptions{Run: id, StateFile: state})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestFollow(t *testing.T) {
	c := startCluster(t)
	st := c.store(t)
	root := generated(t, 256<<10, 5)
	ix := openRun(t, root, true, "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Ship(ctx, st, ix, ShipOptions{Run: "follow", Follow: true, Interval: 100 * time.Millisecond})
		done <- err
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	// An append counts once its record and its batch's tally are held: a
	// search takes its document counts from the tallies (search.go), and
	// Ship sends a batch's tally after its records.
	var base int64
	held := func(h Held) int64 { return min(h.Unique, h.Tallied) }
	waitFor(t, func() bool {
		h, err := st.Held(ctx, []string{"follow"})
		base = held(h["follow"])
		return err == nil && base > 0 && base == expectedRecordsQuiet(root)
	}, 60*time.Second, "the run shipped")
	log := filepath.Join(root, "episode-2", rungen.AgentNames(2)[0], "follow.log")
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const n = 200
	appended := make([]time.Time, n)
	seen := make([]time.Duration, n)
	var mu sync.Mutex
	next := 0
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			h, err := st.Held(ctx, []string{"follow"})
			now := time.Now()
			mu.Lock()
			for err == nil && next < n && held(h["follow"])-base > int64(next) && !appended[next].IsZero() {
				seen[next] = now.Sub(appended[next])
				next++
			}
			all := next == n
			mu.Unlock()
			if all {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	for i := 0; i < n; i++ {
		line := fmt.Sprintf("2026-10-21 18:%02d:%02d INFO  [running] [conv-1] %s followmark%d appended\n", i/60, i%60, rungen.AgentNames(2)[0], i)
		mu.Lock()
		appended[i] = time.Now()
		mu.Unlock()
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-polled:
	case <-time.After(60 * time.Second):
		close(stop)
		<-polled
	}
	mu.Lock()
	defer mu.Unlock()
	if next < n {
		t.Fatalf("%d of %d appends became searchable", next, n)
	}
	sorted := append([]time.Duration(nil), seen...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	t.Logf("append to searchable: median %v, p99 %v, max %v", sorted[n/2], sorted[n*99/100], sorted[n-1])
	// The target (issue 32: each append searchable within 2 s) is a
	// benchmark's (bench/fleet.sh sets it): timed unit tests fail on a
	// loaded machine.
	if target, err := time.ParseDuration(os.Getenv("RUNLS_FLEET_FOLLOW_TARGET")); err == nil && sorted[n-1] > target {
		t.Errorf("FAIL: an append became searchable after %v, over the target %v", sorted[n-1], target)
	}
	// The last append is found by a search, now that its record and tally
	// are held.
	s := &Searcher{Store: st}
	res, err := s.Search(ctx, Request{Request: reqOf("followmark199"), Runs: []string{"follow"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 || !strings.Contains(res.Items[0].Text, "followmark199") {
		t.Errorf("search for the last append: %+v", res.Items)
	}
}

func expectedRecordsQuiet(root string) int64 {
	m := &memStore{}
	ix, err := openForChild(root)
	if err != nil {
		return -1
	}
	defer ix.Close()
	sum, err := Ship(context.Background(), m, ix.Index, ShipOptions{Run: "x"})
	if err != nil {
		return -1
	}
	return sum.Held
}

func waitFor(t *testing.T, cond func() bool, limit time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestShipIDsUnique: every record shipped has an id of its own.
func TestShipIDsUnique(t *testing.T) {
	root := generated(t, 2<<20, 11)
	m := &memStore{}
	if _, err := Ship(context.Background(), m, openRun(t, root, true, ""), ShipOptions{Run: "u"}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]Entry{}
	dups := 0
	for _, e := range m.entries {
		if p, ok := seen[e.RecordID]; ok {
			if dups < 5 {
				t.Errorf("%s twice: %s:%d %q and %s:%d %q", e.RecordID, p.Path, p.Line, p.Text[:min(40, len(p.Text))], e.Path, e.Line, e.Text[:min(40, len(e.Text))])
			}
			dups++
		}
		seen[e.RecordID] = e
	}
	t.Logf("%d entries, %d duplicates", len(m.entries), dups)
}

// TestTallyCountsEntries: the tallies a ship sends (what a search's
// statistics are read from) sum to what the entries hold, counted by brute
// force: records, pieces and terms by agent, episode and conversation, and
// each term's pieces by agent; small batches, so that many tallies add up.
func TestTallyCountsEntries(t *testing.T) {
	root := generated(t, 1<<20, 13)
	m := &memStore{}
	if _, err := Ship(context.Background(), m, openRun(t, root, true, "../testdata/interpreter.json"), ShipOptions{Run: "t", BatchBytes: 32 << 10}); err != nil {
		t.Fatal(err)
	}
	wantGroups, gotGroups := map[TallyKey]TallyCounts{}, map[TallyKey]TallyCounts{}
	wantTerms, gotTerms := map[string]map[string]int64{}, map[string]map[string]int64{}
	multi := 0
	for _, e := range m.entries {
		k := TallyKey{Agent: e.Agent, Episode: e.Episode}
		if e.Conversation != nil {
			k.Conversation, k.InConversation = *e.Conversation, true
		}
		g := wantGroups[k]
		g.Records++
		g.Pieces += int64(len(e.Pieces))
		for _, p := range e.Pieces {
			tf, dl := retriever.PieceTerms(e.Text[p.TextStart:p.TextEnd])
			g.Tokens += int64(dl)
			if wantTerms[e.Agent] == nil {
				wantTerms[e.Agent] = map[string]int64{}
			}
			for term := range tf {
				wantTerms[e.Agent][term]++
			}
		}
		if len(e.Pieces) > 1 {
			multi++
		}
		wantGroups[k] = g
	}
	for _, tl := range m.tallies {
		for k, c := range tl.Groups {
			g := gotGroups[k]
			g.Records += c.Records
			g.Pieces += c.Pieces
			g.Tokens += c.Tokens
			gotGroups[k] = g
		}
		for a, terms := range tl.Terms {
			if gotTerms[a] == nil {
				gotTerms[a] = map[string]int64{}
			}
			for term, n := range terms {
				gotTerms[a][term] += n
			}
		}
	}
	t.Logf("%d entries (%d of several pieces) in %d tallies, %d groups", len(m.entries), multi, len(m.tallies), len(wantGroups))
	if len(m.tallies) < 5 || multi == 0 {
		t.Fatalf("want many tallies and records of several pieces: %d, %d", len(m.tallies), multi)
	}
	if !reflect.DeepEqual(gotGroups, wantGroups) {
		t.Errorf("the tallies' groups differ from the entries':\n got %v\nwant %v", gotGroups, wantGroups)
	}
	if !reflect.DeepEqual(gotTerms, wantTerms) {
		t.Errorf("the tallies' term counts differ from the entries' pieces")
	}
}

// lateStore is a memStore whose failAt'th batch is lost to its sender (as
// if killed mid-request) and shows in the store only at its release'th
// flush: a front node still reading a dead shipper's request.
type lateStore struct {
	*memStore
	failAt, release int
	ships, flushes  int
	late            *memStore // the batch not shown yet
}

func (l *lateStore) Ship(ctx context.Context, b Batch) error {
	l.ships++
	if l.ships == l.failAt {
		l.late = &memStore{}
		_ = l.late.Ship(ctx, b) // copies the batch, which the shipper reuses
		return errors.New("the shipper was killed")
	}
	return l.memStore.Ship(ctx, b)
}

func (l *lateStore) Flush(ctx context.Context) error {
	l.flushes++
	if l.flushes >= l.release {
		l.show()
	}
	return nil
}

// show makes the late batch held.
func (l *lateStore) show() {
	if l.late == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, l.late.entries...)
	for id, t := range l.late.tallies {
		if l.tallies == nil {
			l.tallies, l.tallied = map[string]*Tally{}, map[string]int64{}
		}
		l.tallies[id] = t
	}
	for r, n := range l.late.tallied {
		l.tallied[r] += n
	}
	l.late = nil
}

// TestShipRecoverWaitsForLateBatch: the batch in flight when a shipper
// died shows in the store only after the restarted shipper's first look;
// the restart must not send it again (TestShipKilled held records twice
// at load 20 this way when recover looked once).
func TestShipRecoverWaitsForLateBatch(t *testing.T) {
	root := generated(t, 1<<20, 4)
	want := expectedRecords(t, root, true)
	state := filepath.Join(t.TempDir(), "state.json")
	ctx := context.Background()
	m := &memStore{}
	killed := &lateStore{memStore: m, failAt: 3, release: 1 << 30}
	if _, err := Ship(ctx, killed, openRun(t, root, true, ""), ShipOptions{Run: "r", StateFile: state, BatchBytes: 64 << 10}); err == nil {
		t.Fatal("the first ship did not stop at its lost batch")
	}
	// The restart's settle flushes once, then it looks; the batch shows
	// at the flush after that look.
	restart := &lateStore{memStore: m, release: 2, late: killed.late}
	if _, err := Ship(ctx, restart, openRun(t, root, true, ""), ShipOptions{Run: "r", StateFile: state, BatchBytes: 64 << 10, Settle: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	restart.show() // had it not shown yet, it does now
	h, _ := m.Held(ctx, []string{"r"})
	if h["r"].Records != want || h["r"].Unique != want {
		t.Errorf("the store holds %+v, want each of %d records once", h["r"], want)
	}
}
