package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mergingEngine is a slowEngine that says when it is asked to merge.
type mergingEngine struct {
	*slowEngine
	merges chan time.Time
}

func (e *mergingEngine) MergeIdle() { e.merges <- time.Now() }

func newMergingEngine() *mergingEngine {
	return &mergingEngine{slowEngine: newSlowEngine(), merges: make(chan time.Time, 8)}
}

// TestIdleMergeAfterIndexing: once the first indexing has ended and no call
// has come for the pause, the engine is asked to merge, once; not before the
// pause, and never with a negative pause.
func TestIdleMergeAfterIndexing(t *testing.T) {
	const quiet = 200 * time.Millisecond
	eng := newMergingEngine()
	start(t, "", startOpts{engine: eng, idleMerge: quiet})
	indexed := time.Now()
	close(eng.release)
	select {
	case at := <-eng.merges:
		if d := at.Sub(indexed); d < quiet {
			t.Errorf("asked to merge %v after the indexing, before the pause of %v", d, quiet)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("never asked to merge after the first indexing")
	}
	select {
	case <-eng.merges:
		t.Error("asked to merge twice")
	case <-time.After(4 * quiet):
	}

	never := newMergingEngine()
	start(t, "", startOpts{engine: never, idleMerge: -1})
	close(never.release)
	select {
	case <-never.merges:
		t.Error("asked to merge with IdleMerge < 0")
	case <-time.After(4 * quiet):
	}
}

// TestIdleMergeWaitsForCalls: while a call is being answered, and while
// calls keep coming within the pause, the engine is not asked to merge; once
// the pause has passed after the last call, it is.
func TestIdleMergeWaitsForCalls(t *testing.T) {
	const quiet = 400 * time.Millisecond
	eng := newMergingEngine()
	cs := start(t, "", startOpts{engine: eng, idleMerge: quiet})
	close(eng.release)
	// A search that holds on for several pauses (slowEngine's "slow" waits
	// for its context), cancelled from here.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // a failure below must not leave the session held by the search
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "slow"}})
	}()
	<-eng.searching
	select {
	case <-eng.merges:
		t.Fatal("asked to merge while a call was being answered")
	case <-time.After(3 * quiet):
	}
	cancel()
	<-answered
	// Calls one after another, each well within the pause, for longer
	// than the pause: still none.
	var ended time.Time
	for begun := time.Now(); time.Since(begun) < 2*quiet; {
		call(t, cs, "run_info", map[string]any{})
		ended = time.Now()
		time.Sleep(quiet / 8)
	}
	select {
	case <-eng.merges:
		t.Fatal("asked to merge while calls kept coming")
	default:
	}
	select {
	case at := <-eng.merges:
		if d := at.Sub(ended); d < quiet-quiet/8 {
			t.Errorf("asked to merge %v after the last call, before the pause of %v", d, quiet)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("never asked to merge after the calls ended")
	}
}
