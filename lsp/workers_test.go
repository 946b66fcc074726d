package lsp

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestWorkersNeverQueue: requests that wait for each other all run at
// once, however many more than the idle workers kept.
func TestWorkersNeverQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := newWorkers(ctx)
	const n = 3 * maxIdleWorkers
	var all sync.WaitGroup
	all.Add(n)
	done := make(chan struct{}, n)
	for range n {
		w.do(func() {
			all.Done()
			all.Wait() // every other one has started too
			done <- struct{}{}
		})
	}
	for range n {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("a request waited for another to end")
		}
	}
	cancel()
	w.wait()
}

// TestWorkersReused: requests one after the other run on the worker kept
// idle, and the idle ones end with the context.
func TestWorkersReused(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := newWorkers(ctx)
	for range 100 {
		ran := make(chan struct{})
		w.do(func() { close(ran) })
		<-ran
		// The worker is idle once it counts itself so.
		for deadline := time.Now().Add(10 * time.Second); w.idle.Load() == 0; {
			if time.Now().After(deadline) {
				t.Fatal("the worker never went idle")
			}
			time.Sleep(time.Microsecond)
		}
	}
	// A request handed over while its worker is between counting itself
	// idle and waiting gets a new one: a few, not one a request.
	if made := w.made.Load(); made > 10 {
		t.Errorf("%d workers made for 100 requests one after the other, want a few", made)
	}
	cancel()
	w.wait()
	if idle := w.idle.Load(); idle != 0 {
		t.Errorf("%d workers idle after the end", idle)
	}
}

// TestWorkersEndWhenQuiet: an idle worker ends after workerIdleFor.
func TestWorkersEndWhenQuiet(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWorkers(ctx)
	w.do(func() {})
	ended := make(chan struct{})
	go func() { w.wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(workerIdleFor + 10*time.Second):
		t.Fatal("an idle worker outlived workerIdleFor")
	}
}
