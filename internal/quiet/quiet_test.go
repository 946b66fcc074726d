package quiet

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestAwait: it returns true once the pause has passed both since its call
// and since the last request; not while requests keep coming (lastBusy
// moves on); false when ctx ends first.
func TestAwait(t *testing.T) {
	const pause = 100 * time.Millisecond
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	lastBusy := func() time.Time { return time.Unix(0, last.Load()) }

	start := time.Now()
	if !Await(context.Background(), pause, lastBusy) {
		t.Fatal("no pause seen")
	}
	if d := time.Since(start); d < pause {
		t.Errorf("returned after %v, before the pause of %v", d, pause)
	}

	// Requests keep coming: the last one was always a quarter of the pause
	// ago, however late the checks run (a goroutine that stored each
	// request's time on a ticker let a pause pass when a loaded machine
	// held it up for a pause).
	ctx, cancel := context.WithTimeout(context.Background(), 4*pause)
	defer cancel()
	if Await(ctx, pause, func() time.Time { return time.Now().Add(-pause / 4) }) {
		t.Error("a pause seen while requests kept coming")
	}

	// A busy server (lastBusy is now) sees no pause.
	ctx, cancel = context.WithTimeout(context.Background(), 4*pause)
	defer cancel()
	if Await(ctx, pause, time.Now) {
		t.Error("a pause seen while a request was being answered")
	}
	// A pause shorter than 8 ns ticks at the floor (time.NewTicker panics
	// at 0).
	if !Await(context.Background(), 1, func() time.Time { return time.Time{} }) {
		t.Error("no pause of 1 ns seen")
	}
}
