package lsp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"runls/retriever"
)

// createTimeout bounds the wait for the client's answer to
// window/workDoneProgress/create: a client that never answers gets no progress
// rather than a server that never indexes.
const createTimeout = 5 * time.Second

// progress is one work-done progress shown by the client. A nil *progress does
// nothing, so callers need not ask whether the client takes progress.
type progress struct {
	s     *server
	token protocol.ProgressToken
	// mu orders the reports: the engine reports from several workers, and a
	// percentage checked and sent apart could reach the client after a larger one.
	mu   sync.Mutex
	last int // the last percentage reported
}

// beginProgress creates a progress token with the client and begins it, when
// the client said it takes window.workDoneProgress; otherwise it returns nil.
func (s *server) beginProgress(ctx context.Context, title string) *progress {
	if !s.clientCaps().workDoneProgress {
		return nil
	}
	token := protocol.NewProgressToken(fmt.Sprintf("runls-%d", s.progressSeq.Add(1)))
	cctx, cancel := context.WithTimeout(ctx, createTimeout)
	defer cancel()
	if err := s.client.WorkDoneProgressCreate(cctx, &protocol.WorkDoneProgressCreateParams{Token: *token}); err != nil {
		s.logger.Warn("window/workDoneProgress/create", zap.Error(err))
		return nil
	}
	p := &progress{s: s, token: *token, last: 0}
	zero := uint32(0)
	p.send(ctx, &progressBegin{Kind: protocol.WorkDoneProgressKindBegin, Title: title, Percentage: &zero})
	return p
}

// progressBegin is protocol.WorkDoneProgressBegin with a percentage that
// can be 0: that one drops a zero percentage (omitempty), and LSP lets a
// client ignore the percentages of the reports when the begin has none.
type progressBegin struct {
	Kind       protocol.WorkDoneProgressKind `json:"kind"`
	Title      string                        `json:"title"`
	Percentage *uint32                       `json:"percentage,omitempty"`
}

// fromClient uses a token the client gave with its request (workDoneToken).
func (s *server) fromClient(ctx context.Context, token *protocol.ProgressToken, title string) *progress {
	if token == nil {
		return nil
	}
	p := &progress{s: s, token: *token, last: -1}
	p.send(ctx, &progressBegin{Kind: protocol.WorkDoneProgressKindBegin, Title: title})
	return p
}

// report sends a percentage (0-100) when it grew since the last one sent.
func (p *progress) report(ctx context.Context, message string, percent int) {
	if p == nil {
		return
	}
	percent = max(0, min(percent, 100))
	p.mu.Lock()
	defer p.mu.Unlock()
	if percent <= p.last {
		return
	}
	p.last = percent
	p.send(ctx, &protocol.WorkDoneProgressReport{Kind: protocol.WorkDoneProgressKindReport, Message: message, Percentage: uint32(percent)})
}

// end ends the progress.
func (p *progress) end(ctx context.Context, message string) {
	if p == nil {
		return
	}
	p.send(ctx, &protocol.WorkDoneProgressEnd{Kind: protocol.WorkDoneProgressKindEnd, Message: message})
}

// refreshReporter turns the engine's indexing progress into reports.
func (p *progress) refreshReporter(ctx context.Context) func(retriever.Progress) {
	if p == nil {
		return func(retriever.Progress) {}
	}
	return func(pr retriever.Progress) {
		pct := 0
		switch {
		case pr.BytesTotal > 0:
			pct = int(pr.BytesDone * 100 / pr.BytesTotal)
		case pr.FilesTotal > 0:
			pct = pr.FilesDone * 100 / pr.FilesTotal
		}
		p.report(ctx, fmt.Sprintf("%d/%d files", pr.FilesDone, pr.FilesTotal), pct)
	}
}

func (p *progress) send(ctx context.Context, value any) {
	// The end must reach the client even when the work was cancelled.
	err := p.s.client.Progress(context.WithoutCancel(ctx), &protocol.ProgressParams{Token: p.token, Value: value})
	if err != nil {
		p.s.logger.Debug("$/progress", zap.Error(err))
	}
}
