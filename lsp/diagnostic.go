package lsp

import (
	"context"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
	"go.uber.org/zap"

	"runls/internal/quiet"
	"runls/retriever"
)

// DiagnosticSource is the source of every diagnostic runls publishes.
const DiagnosticSource = "runls"

// DidOpen publishes the opened file's diagnostics (once indexing allows).
func (h handlers) DidOpen(ctx context.Context, params *protocol.DidOpenTextDocumentParams) error {
	path, ok := h.s.pathOf(params.TextDocument.URI)
	if !ok {
		return nil
	}
	h.s.diagMu.Lock()
	h.s.opened[path] = true
	h.s.diagMu.Unlock()
	g := h.s.acquire()
	if g == nil || g.engine == nil {
		g.release()
		return nil
	}
	h.s.goBackground(func() {
		defer g.release()
		if g.waitReady(g.ctx) != nil {
			return
		}
		h.s.publishChanges(g, []string{path})
	})
	return nil
}

// DidClose forgets an opened file; its diagnostics stay, as for every record file.
func (h handlers) DidClose(ctx context.Context, params *protocol.DidCloseTextDocumentParams) error {
	if path, ok := h.s.pathOf(params.TextDocument.URI); ok {
		h.s.diagMu.Lock()
		delete(h.s.opened, path)
		h.s.diagMu.Unlock()
	}
	return nil
}

// publishAll publishes the diagnostics of every record file of a freshly
// indexed generation, and clears those published before that it no longer has.
//
// Requests go first: before each file it waits while one is being answered
// or one was answered less than requestQuiet ago (at most publishYield a
// file), and while more than a file's worth of diagnostics wait for the
// client (stream.waitBackground), whose replies overtake the diagnostics
// queued. A file's diagnostics are one message, which a reply cannot
// overtake once it is being written: at 1 GB, where stack traces give
// thousands of Hints a file (all published, spec §9), a message is some
// 360 KB, and a search asked while one was on its way waited 10–25 ms for
// the client to read it (issue 13's p99, measured right after a first
// index). So while a person searches, the diagnostics wait, as gopls's
// wait for a pause in the edits. At 1 GB the diagnostics of every file are
// some second of CPU (most of it reading stack traces back), made as the
// first requests of a reopened index come, and they took the CPU the first
// answer needed (issue 33).
func (s *server) publishAll(g *generation) {
	files := g.engine.RecordFiles()
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		// Retired (shutdown, new settings, another run): the rest is not
		// published. At 10 GB every file's diagnostics took some 8 s of
		// CPU after a reopen, and an exit waited for them.
		if g.ctx.Err() != nil {
			return
		}
		seen[f] = true
		s.awaitRequests(g.ctx, time.Now().Add(publishYield))
		if s.stream != nil && s.stream.waitBackground(g.ctx) != nil {
			return // retired, or nothing more can be sent
		}
		// The settings are read a file at a time: a publishing that let
		// requests go first for seconds may run beside republish's, and
		// the file published last must show what the settings say now.
		s.publishFile(g, f, false)
	}
	func() {
		shown := s.diagnosticsShown()
		s.diagMu.Lock()
		defer s.diagMu.Unlock()
		for f := range s.published {
			if !seen[f] {
				s.publishLocked(g, f, true, shown)
			}
		}
		for f := range s.opened {
			if !seen[f] {
				s.publishLocked(g, f, true, shown)
			}
		}
	}()
	if s.opts.BoundMemory {
		// The heap's free pages back to the kernel, as the engine gives
		// them after its first walk of a watched run: the publishing runs
		// beside that walk, and what it read stayed counted (a reopen of
		// 100,000 files: RssAnon 53 -> 98 MB). Not under diagMu: a forced
		// collection would hold up didOpen and the watcher's publishing.
		debug.FreeOSMemory()
	}
}

// publishFile publishes one file's diagnostics under diagMu, which a
// panic in the making leaves unlocked (the generation's goroutine recovers
// it and watches on: didOpen and the watcher's publishing take diagMu).
func (s *server) publishFile(g *generation, f string, always bool) {
	shown := s.diagnosticsShown()
	s.diagMu.Lock()
	defer s.diagMu.Unlock()
	s.publishLocked(g, f, always, shown)
}

// publishYield bounds how long publishAll lets requests go first before
// each file: however busy the client keeps the server, a file a second is
// published, and a reply waits behind one of them at most (a bound in all,
// then every file at once, had the client read seconds of them while the
// searches waited).
const publishYield = time.Second

// requestQuiet is the pause after a request that publishAll takes for the
// end of a person's searching: a search a keystroke comes well within it.
const requestQuiet = 50 * time.Millisecond

// awaitRequests waits, until until, while a request is being answered or
// was answered less than requestQuiet ago.
func (s *server) awaitRequests(ctx context.Context, until time.Time) {
	for ctx.Err() == nil && time.Now().Before(until) {
		if time.Since(s.lastBusy()) >= requestQuiet {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// awaitIdle waits until no request has been answered for pause, counted
// from its call (the first index's end), and reports whether it did before
// ctx ended.
func (s *server) awaitIdle(ctx context.Context, pause time.Duration) bool {
	return quiet.Await(ctx, pause, s.lastBusy)
}

// lastBusy is when the server last answered a request (on a worker, or a
// search on the loop: beginCall): now while one is being answered.
func (s *server) lastBusy() time.Time {
	s.cancelMu.Lock()
	defer s.cancelMu.Unlock()
	if len(s.inflight) > 0 {
		return time.Now()
	}
	return s.lastAnswered
}

// republish publishes every file's diagnostics again, after a setting
// changed what is shown of them (the index stays).
func (s *server) republish() {
	g := s.acquire()
	if g == nil || g.engine == nil {
		g.release()
		return
	}
	s.goBackground(func() {
		defer g.release()
		if g.waitReady(g.ctx) == nil {
			s.publishAll(g)
		}
	})
}

// diagnosticsShown is what the settings make of the diagnostics now.
func (s *server) diagnosticsShown() diagnosticsShown {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings.diagnostics()
}

// publishChanges publishes the diagnostics of files that may have changed,
// empty ones included (they clear what was shown).
func (s *server) publishChanges(g *generation, files []string) {
	shown := s.diagnosticsShown()
	s.diagMu.Lock()
	defer s.diagMu.Unlock()
	for _, f := range files {
		if g.ctx.Err() != nil {
			return
		}
		s.publishLocked(g, f, true, shown)
	}
}

// publishLocked publishes one file's diagnostics as the settings show them.
// An empty list is sent only when always is set or when the client shows
// some for the file.
func (s *server) publishLocked(g *generation, path string, always bool, shown diagnosticsShown) {
	var ds []retriever.Diagnostic
	if shown.max > 0 {
		ds = g.engine.Diagnostics(path, shown.max, shown.leaveOut...)
	}
	if len(ds) == 0 && !always && !s.published[path] {
		return
	}
	out := make([]protocol.Diagnostic, 0, len(ds))
	for _, d := range ds {
		out = append(out, toProtocolDiagnostic(d))
	}
	err := s.client.PublishDiagnostics(s.ctx, &protocol.PublishDiagnosticsParams{
		URI:         uri.URI(g.fileURI(path)),
		Diagnostics: out,
	})
	if err != nil {
		s.logger.Debug("textDocument/publishDiagnostics", zap.Error(err))
		return
	}
	if len(out) > 0 {
		s.published[path] = true
	} else {
		delete(s.published, path)
	}
}

func toProtocolDiagnostic(d retriever.Diagnostic) protocol.Diagnostic {
	return protocol.Diagnostic{
		Range:    toProtocolRange(d.Range),
		Severity: protocol.DiagnosticSeverity(d.Severity),
		Code:     d.Code,
		Source:   DiagnosticSource,
		Message:  d.Message,
	}
}

func toProtocolRange(r retriever.Range) protocol.Range {
	return protocol.Range{
		Start: protocol.Position{Line: uint32(r.Start.Line), Character: uint32(r.Start.Character)},
		End:   protocol.Position{Line: uint32(r.End.Line), Character: uint32(r.End.Character)},
	}
}

// pathOf turns a document URI into a path under the engine's run folder. It
// refuses URIs that are not file URIs (uri.URI.Filename panics on them) and
// paths outside the run folder. A run folder the client names through a
// symbolic link is mapped to its real path, which is what the engine uses.
func (s *server) pathOf(u protocol.DocumentURI) (string, bool) {
	str := string(u)
	if !strings.HasPrefix(strings.ToLower(str), "file://") {
		s.logger.Debug("not a file URI", zap.String("uri", str))
		return "", false
	}
	path, err := filenameOf(uri.URI(str))
	if err != nil {
		s.logger.Debug("bad file URI", zap.String("uri", str), zap.Error(err))
		return "", false
	}
	s.mu.Lock()
	root := s.root
	g := s.gen
	s.mu.Unlock()
	if g == nil || g.engine == nil {
		return path, true
	}
	real := g.engine.Root()
	for _, base := range []string{real, root} {
		if rel, err := filepath.Rel(base, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.Join(real, rel), true
		}
	}
	return "", false
}

// filenameOf is uri.URI.Filename without its panic on a URI it cannot parse.
func filenameOf(u uri.URI) (path string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errBadURI
		}
	}()
	return u.Filename(), nil
}
