package lsp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"runls/masking"
	"runls/retriever"
)

// generation is one opened engine with the settings it was opened with. A
// settings change that alters the index replaces the generation; requests that
// already hold the old one finish on it before it is closed.
type generation struct {
	engine Engine // nil: nothing is served, for the reason in why
	why    string

	ctx    context.Context // ends when the generation is retired
	cancel context.CancelFunc
	ready  chan struct{} // closed when the first indexing has ended
	done   chan struct{} // closed when indexing and watching have ended
	users  sync.WaitGroup

	// probe is the engine opened on a folder that is not a run folder (yet):
	// it is asked again every PollInterval, as a run folder gets its first
	// episode folder when the run starts.
	probe Engine
}

// acquire returns the current generation, counted as in use until release.
// A client that sends a request without the initialized notification first
// gets indexing started by it.
func (s *server) acquire() *generation {
	s.ensureStarted()
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gen
	if g != nil {
		g.users.Add(1)
	}
	return g
}

func (g *generation) release() {
	if g != nil {
		g.users.Done()
	}
}

// askEngine is the path of the custom requests that ask the engine one
// question: it waits for the first indexing to end, then asks, with the
// engine's errors answered as invalid params. Without an engine (no run
// folder is served) the answer is T's zero value, which the handler makes
// its empty answer.
func askEngine[T any](ctx context.Context, s *server, ask func(Engine) (T, error)) (T, error) {
	var zero T
	g := s.acquire()
	defer g.release()
	if g == nil || g.engine == nil {
		return zero, nil
	}
	if err := g.waitReady(ctx); err != nil {
		return zero, err
	}
	res, err := ask(g.engine)
	if err != nil {
		return zero, requestError(err)
	}
	return res, nil
}

// waitReady waits for the first indexing to end, or ctx.
func (g *generation) waitReady(ctx context.Context) error {
	select {
	case <-g.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readyWithin waits at most d for the first indexing to end, or ctx, and
// reports whether it ended.
func (g *generation) readyWithin(ctx context.Context, d time.Duration) (bool, error) {
	if g.isReady() {
		return true, nil // the common case, without a timer
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-g.ready:
		return true, nil
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

func (g *generation) isReady() bool {
	select {
	case <-g.ready:
		return true
	default:
		return false
	}
}

// retire stops a generation's background work and closes its engine once no
// request uses it. Nil-safe.
func (s *server) retire(g *generation) {
	if g == nil {
		return
	}
	g.cancel()
	s.goBackground(func() {
		<-g.done
		g.users.Wait()
		for _, e := range []Engine{g.engine, g.probe} {
			if e != nil {
				if err := e.Close(); err != nil {
					s.logger.Warn("closing the engine", zap.Error(err))
				}
			}
		}
	})
}

// ensureStarted starts the first generation once, after initialize.
func (s *server) ensureStarted() {
	s.mu.Lock()
	start := !s.started && s.state == stateInitialized
	s.started = s.started || start
	s.mu.Unlock()
	if start {
		s.startGeneration()
	}
}

// startGeneration opens an engine with the current settings, replaces the
// current generation with it and starts indexing in the background.
func (s *server) startGeneration() {
	s.mu.Lock()
	st, root, noRoot := s.settings, s.root, s.noRoot
	stopped := s.state == stateShutdown || s.ctx.Err() != nil
	s.mu.Unlock()
	if stopped {
		return
	}

	g := &generation{ready: make(chan struct{}), done: make(chan struct{})}
	g.ctx, g.cancel = context.WithCancel(s.ctx)
	if root == "" {
		g.why = noRoot
	} else {
		eng, err := s.openEngine(g.ctx, root, st)
		switch {
		case err != nil:
			g.why = fmt.Sprintf("cannot open %s: %v", root, err)
		case !eng.IsRunFolder():
			g.why = fmt.Sprintf("%s is not a run folder (it has no episode-N folder)", root)
			g.probe = eng
		default:
			g.engine = withClientRoot(eng, root)
		}
	}

	s.mu.Lock()
	old := s.gen
	s.gen = g
	showWhy := g.why != "" && !s.shownWhy
	if showWhy {
		s.shownWhy = true
	}
	s.mu.Unlock()
	s.retire(old)

	if g.engine == nil {
		close(g.ready)
		s.logger.Warn("serving nothing", zap.String("why", g.why))
		if showWhy {
			s.goBackground(func() {
				s.showMessage(s.ctx, protocol.MessageTypeWarning, "runls: "+g.why+"; runls serves nothing in this workspace.")
			})
		}
		if g.probe == nil {
			close(g.done)
			return
		}
		s.goBackground(func() {
			defer close(g.done)
			t := time.NewTicker(s.opts.PollInterval)
			defer t.Stop()
			for {
				select {
				case <-g.ctx.Done():
					return
				case <-t.C:
				}
				if g.probe.IsRunFolder() {
					s.logger.Info("the workspace became a run folder", zap.String("root", root))
					s.startGeneration()
					return
				}
			}
		})
		return
	}
	s.goBackground(func() { s.runGeneration(g) })
}

// openEngine opens the engine with settings st.
func (s *server) openEngine(ctx context.Context, root string, st Settings) (Engine, error) {
	var m masking.Masker
	if st.Masking == MaskingHidingOutside {
		hm, err := hidingOutside(root)
		if err != nil {
			return nil, err
		}
		m = hm
	}
	return s.opts.Open(ctx, retriever.Options{
		Root:        root,
		Interpreter: st.interpreter,
		Masker:      m,
		Logger:      s.engineLogger(),
		Cache:       s.opts.Cache,
		BoundMemory: s.opts.BoundMemory,
	})
}

// runGeneration indexes, then publishes the diagnostics while it watches
// the run, and keeps them current until the generation is retired.
//
// The watching starts at once, beside the publishing: until it has, a
// search has no barrier and walks the whole run before it answers (4 ms at
// 1 GB, 800 files), and the publishing takes seconds at 1 GB (issue 13's
// p99, right after a first index: every search of the first 3 s walked).
func (s *server) runGeneration(g *generation) {
	defer close(g.done)
	func() {
		defer close(g.ready)
		start := time.Now()
		p := s.beginProgress(g.ctx, "runls: indexing the run")
		var changes retriever.Changes
		var err error
		changes, err = g.engine.Refresh(g.ctx, p.refreshReporter(g.ctx))
		if err != nil {
			p.end(g.ctx, "indexing failed")
			if !errors.Is(err, context.Canceled) {
				s.logger.Error("indexing", zap.String("root", g.engine.Root()), zap.Error(err))
			}
			return
		}
		p.end(g.ctx, "indexed")
		s.logger.Info("indexed", zap.String("root", g.engine.Root()), zap.Duration("took", time.Since(start)),
			zap.Int("changedRecordFiles", len(changes.Files)))
	}()
	if g.ctx.Err() != nil {
		return
	}
	defer s.alongside("publishing the diagnostics", func() { s.publishAll(g) })()
	defer s.alongside("merging when idle", func() {
		if s.awaitIdle(g.ctx, s.opts.IdleMerge) {
			g.engine.MergeIdle()
		}
	})()

	err := g.engine.Watch(g.ctx, func(c retriever.Changes) { s.publishChanges(g, c.Files) })
	if g.ctx.Err() != nil {
		return
	}
	// Watch ended while the generation lives: keep the diagnostics current
	// by refreshing instead.
	s.logger.Warn("watching the run stopped: refreshing it periodically instead",
		zap.Duration("every", s.opts.PollInterval), zap.Error(err))
	t := time.NewTicker(s.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-t.C:
		}
		c, err := g.engine.Refresh(g.ctx, func(retriever.Progress) {})
		if err != nil {
			if g.ctx.Err() == nil {
				s.logger.Warn("refreshing", zap.Error(err))
			}
			continue
		}
		if len(c.Files) > 0 {
			s.publishChanges(g, c.Files)
		}
	}
}

// alongside runs f on a goroutine of its own, a panic in it logged as in
// what, and returns the wait for its end: what a generation does beside
// its watching, which it waits for before it ends.
func (s *server) alongside(what string, f func()) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer s.recoverLog(what)
		f()
	}()
	return func() { <-done }
}

// hidingOutside builds the masker of spec §8 for the run folder root.
func hidingOutside(root string) (masking.Masker, error) {
	return masking.HidingOutside(root), nil
}
