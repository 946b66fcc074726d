package runfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// testBarrier is a barrier whose events the test delivers by hand.
func testBarrier(t *testing.T) (*Barrier, *atomic.Int32) {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "barrier"))
	must(t, err)
	t.Cleanup(func() { f.Close() })
	lost := new(atomic.Int32)
	return &Barrier{dir: dir, path: f.Name(), f: f, lostFn: func() { lost.Add(1) }, changed: make(chan struct{})}, lost
}

// waitAsync starts a wait and returns its result channel once the wait has
// made (or asked for) its write.
func waitAsync(b *Barrier, timeout time.Duration) <-chan error {
	b.mu.Lock()
	waits := b.waits
	b.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- b.Wait(context.Background(), timeout) }()
	for {
		b.mu.Lock()
		begun := b.waits > waits
		b.mu.Unlock()
		if begun {
			return done
		}
		time.Sleep(time.Millisecond)
	}
}

func pending(c <-chan error) bool {
	select {
	case <-c:
		return false
	case <-time.After(20 * time.Millisecond):
		return true
	}
}

// TestBarrierOrder: a wait returns only after the event of a write made
// after it began; a wait that comes while a write is in flight waits for the
// next one, and waits that come together share it.
func TestBarrierOrder(t *testing.T) {
	b, lost := testBarrier(t)
	a := waitAsync(b, time.Minute)
	if b.written != 1 || !pending(a) {
		t.Fatalf("the first wait: %d writes, pending %v", b.written, pending(a))
	}
	c := waitAsync(b, time.Minute) // the write in flight may predate it
	d := waitAsync(b, time.Minute)
	if b.written != 1 || !b.again {
		t.Fatalf("waits during a write in flight: %d writes, again %v", b.written, b.again)
	}
	b.Arrived()
	if err := <-a; err != nil {
		t.Fatal(err)
	}
	if b.written != 2 || !pending(c) || !pending(d) {
		t.Fatalf("after the first event: %d writes; the later waits must wait for the second", b.written)
	}
	b.Arrived()
	if err := <-c; err != nil {
		t.Fatal(err)
	}
	if err := <-d; err != nil {
		t.Fatal(err)
	}
	b.Arrived() // a stray event changes nothing
	if b.written != 2 || b.seen != 2 || lost.Load() != 0 {
		t.Fatalf("after a stray event: written %d, seen %d, lost %d", b.written, b.seen, lost.Load())
	}
}

// TestBarrierLost: when events are lost (the kernel's queue overflowed), the
// waits return, after every folder was marked to be listed; a write whose
// event never comes is given up after the timeout the same way.
func TestBarrierLost(t *testing.T) {
	b, lost := testBarrier(t)
	a := waitAsync(b, time.Minute)
	c := waitAsync(b, time.Minute)
	b.Lost()
	if err := <-a; err != nil {
		t.Fatal(err)
	}
	if err := <-c; err != nil {
		t.Fatal(err)
	}
	if lost.Load() != 1 {
		t.Fatalf("lost told %d times, want 1", lost.Load())
	}
	if err := b.Wait(context.Background(), 10*time.Millisecond); !errors.Is(err, ErrBarrierLate) {
		t.Fatalf("a wait whose event never comes: %v", err)
	}
	if lost.Load() != 2 {
		t.Fatalf("lost told %d times, want 2", lost.Load())
	}
	// The next wait writes again and works as before.
	a = waitAsync(b, time.Minute)
	b.Arrived()
	if err := <-a; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Wait(ctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
