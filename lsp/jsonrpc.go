package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"
)

// CodeServerNotInitialized is the LSP error for a request before initialize.
const CodeServerNotInitialized = jsonrpc2.ServerNotInitialized

// handle is the connection's only jsonrpc2.Handler. It stands in front of
// protocol.ServerHandler because that handler cannot be used alone:
//   - it ignores the fallback handler it is given and sends every method it does
//     not know to Server.Request, so custom methods are routed here first;
//   - protocol.CancelHandler ignores $/cancelRequest with a numeric id (it expects
//     int32 where JSON gives float64), and numeric ids are what VS Code and
//     Neovim send, so cancellation is kept here, by request id;
//   - it answers a param of the wrong type with error code 0, mapped here to
//     -32602;
//   - jsonrpc2.ReplyHandler panics when a handler replies twice or never, which
//     would end the process: replies go through replyOnce instead.
//
// handle never returns an error: jsonrpc2.Conn closes the connection on one.
func (s *server) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	s.dispatch(ctx, reply, req, true)
	return nil
}

// dispatch is handle's: a search may be answered on the calling goroutine
// (inline.go) when inline allows, which a message read aside does not.
func (s *server) dispatch(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request, inline bool) {
	defer s.recoverLog("dispatch of " + req.Method())
	method := req.Method()
	call, isCall := req.(*jsonrpc2.Call)

	if method == protocol.MethodCancelRequest {
		s.cancelRequest(req.Params())
		return
	}
	if method == protocol.MethodExit {
		_ = handlers{s}.Exit(ctx)
		return
	}

	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	var refuse *jsonrpc2.Error
	switch {
	case st == stateCreated && method != protocol.MethodInitialize:
		refuse = jsonrpc2.Errorf(CodeServerNotInitialized, "runls: %s before initialize", method)
	case st != stateCreated && method == protocol.MethodInitialize:
		refuse = jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "runls: initialize was already received")
	case st == stateShutdown:
		refuse = jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "runls: %s after shutdown", method)
	}
	if refuse != nil {
		if isCall {
			s.logger.Info("refused", zap.String("method", method), zap.Error(refuse))
			s.sendReply(reply, method, nil, refuse)
		} else {
			s.logger.Debug("notification dropped", zap.String("method", method), zap.Error(refuse))
		}
		return
	}

	h := s.route(method)
	if h == nil {
		if isCall {
			s.sendReply(reply, method, nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "runls: method not found: %s", method))
		} else {
			s.logger.Debug("notification ignored", zap.String("method", method))
		}
		return
	}

	if !isCall || method == protocol.MethodInitialize || method == protocol.MethodShutdown {
		// Notifications, initialize and shutdown are handled in order, before
		// the next message is read: a request that follows a configuration
		// change or didOpen sees its effect. None of them waits on the client.
		r := &replyOnce{s: s, reply: reply, method: method, cancelled: new(atomic.Bool)}
		s.invoke(ctx, r, req, h, isCall)
		return
	}
	if inline && s.answersInline(method) {
		s.serveInline(call, reply, h)
		return
	}
	s.serveAsync(call, reply, h)
}

// route returns the handler of a method, nil when it is not served.
func (s *server) route(method string) jsonrpc2.Handler {
	if h, ok := s.custom[method]; ok {
		return h
	}
	if servedMethods[method] {
		return protocol.ServerHandler(handlers{s}, nil)
	}
	return nil
}

// servedMethods are the standard methods answered through protocol.ServerHandler.
// Everything else is "method not found" (calls) or ignored (notifications):
// ServerHandler would send unknown methods to Server.Request, and answer one
// without params with a parse error.
var servedMethods = map[string]bool{
	protocol.MethodInitialize:                      true,
	protocol.MethodInitialized:                     true,
	protocol.MethodShutdown:                        true,
	protocol.MethodWorkspaceSymbol:                 true,
	protocol.MethodWorkspaceDidChangeConfiguration: true,
	protocol.MethodTextDocumentDidOpen:             true,
	protocol.MethodTextDocumentDidClose:            true,
	protocol.MethodTextDocumentDocumentSymbol:      true,
	protocol.MethodTextDocumentFoldingRange:        true,
	protocol.MethodTextDocumentHover:               true,
	protocol.MethodSetTrace:                        true,
	protocol.MethodWorkDoneProgressCancel:          true,
}

// inflight is a request being answered.
type inflight struct {
	cancel    context.CancelFunc
	cancelled *atomic.Bool // by the client, through $/cancelRequest
}

// asyncCall is a request answered on a worker (workers.go): its entry among
// the requests in flight and its reply, in one allocation (four were a
// share of what run/search allocated besides the engine, issue 33).
type asyncCall struct {
	entry     inflight
	reply     replyOnce
	id        jsonrpc2.ID
	cancelled atomic.Bool
}

// serveAsync answers a request on a worker (workers.go), apart from the
// reader, cancellable by its id.
func (s *server) serveAsync(call *jsonrpc2.Call, reply jsonrpc2.Replier, h jsonrpc2.Handler) {
	a, ctx := s.beginCall(call, reply)
	if a == nil {
		return // the connection is ending: the client gets no answer now
	}
	s.workers.do(func() {
		defer s.endCall(a)
		s.invoke(ctx, &a.reply, call, h, true)
	})
}

// beginCall enters a request among those in flight, cancellable by its
// id, and counts it as being answered (track); nil when the connection is
// ending. endCall ends what it began.
func (s *server) beginCall(call *jsonrpc2.Call, reply jsonrpc2.Replier) (*asyncCall, context.Context) {
	ctx, cancel := context.WithCancel(s.ctx)
	a := &asyncCall{id: call.ID()}
	a.entry.cancel, a.entry.cancelled = cancel, &a.cancelled
	r := &a.reply
	r.s, r.reply, r.method, r.cancelled, r.id = s, reply, call.Method(), &a.cancelled, &a.id
	s.cancelMu.Lock()
	s.inflight[a.id] = &a.entry
	s.cancelMu.Unlock()
	if !s.track() {
		s.endEntry(a)
		return nil, nil
	}
	return a, ctx
}

// endCall ends a request beginCall began: out of those in flight, its
// context cancelled, no longer counted.
func (s *server) endCall(a *asyncCall) {
	defer s.wg.Done()
	s.endEntry(a)
}

func (s *server) endEntry(a *asyncCall) {
	s.cancelMu.Lock()
	if s.inflight[a.id] == &a.entry {
		delete(s.inflight, a.id)
	}
	s.lastAnswered = time.Now()
	s.cancelMu.Unlock()
	a.entry.cancel()
}

// invoke runs a handler, answering a panic or a missing reply with an
// internal error instead of ending the process.
func (s *server) invoke(ctx context.Context, r *replyOnce, req jsonrpc2.Request, h jsonrpc2.Handler, isCall bool) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("panic in a handler", zap.String("method", req.Method()), zap.Any("panic", p), zap.Stack("stack"))
			_ = r.send(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "runls: internal error in %s", req.Method()))
		}
		if isCall && !r.sent.Load() {
			s.logger.Error("a handler did not reply", zap.String("method", req.Method()))
			_ = r.send(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "runls: no answer to %s", req.Method()))
		}
	}()
	if err := h(ctx, r.send, req); err != nil {
		s.logger.Warn("handler", zap.String("method", req.Method()), zap.Error(err))
	}
}

// cancelRequest cancels the request with the id in params ($/cancelRequest).
// Both number and string ids are taken.
func (s *server) cancelRequest(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	var id jsonrpc2.ID
	if err := json.Unmarshal(params, &p); err != nil || len(p.ID) == 0 {
		s.logger.Warn("$/cancelRequest without a usable id", zap.ByteString("params", params))
		return
	}
	if err := id.UnmarshalJSON(p.ID); err != nil {
		s.logger.Warn("$/cancelRequest with a bad id", zap.ByteString("id", p.ID), zap.Error(err))
		return
	}
	s.cancelMu.Lock()
	entry := s.inflight[id]
	s.cancelMu.Unlock()
	if entry == nil {
		s.logger.Debug("$/cancelRequest for no running request", zap.ByteString("id", p.ID))
		return
	}
	entry.cancelled.Store(true)
	entry.cancel()
	s.logger.Debug("request cancelled", zap.ByteString("id", p.ID))
}

// cancelAll cancels every request being answered.
func (s *server) cancelAll() {
	s.cancelMu.Lock()
	defer s.cancelMu.Unlock()
	for _, e := range s.inflight {
		e.cancel()
	}
}

// sendReply answers once, outside replyOnce (for refusals).
func (s *server) sendReply(reply jsonrpc2.Replier, method string, result any, err error) {
	r := &replyOnce{s: s, reply: reply, method: method, cancelled: new(atomic.Bool)}
	_ = r.send(s.ctx, result, err)
}

// replyOnce sends the first reply of a request and drops any other.
type replyOnce struct {
	s         *server
	reply     jsonrpc2.Replier
	method    string
	sent      atomic.Bool
	cancelled *atomic.Bool
	id        *jsonrpc2.ID // nil: the reply goes through jsonrpc2 only
}

// preEncoded is a result that holds its own JSON, made by the engine and
// checked by its tests: it is written as it is. jsonrpc2 would check and
// copy it once more (run/failures' 370 KB at 1 GB: 1–2 ms a request), or
// make it by reflection (run/search's answer). EncodedJSON returns nil for
// a value it cannot encode, which then goes through jsonrpc2 (and gets its
// error).
type preEncoded interface {
	EncodedJSON() []byte
}

func (r *replyOnce) send(ctx context.Context, result any, err error) error {
	if !r.sent.CompareAndSwap(false, true) {
		r.s.logger.Error("a second reply was dropped", zap.String("method", r.method), zap.Error(err))
		return nil
	}
	werr := r.wireError(err)
	if werr != nil {
		result = nil
	}
	if res, ok := result.(*SearchResult); ok && werr == nil && r.id != nil && r.s.stream != nil {
		// Its JSON written into the frame (about 1 KB an item).
		_, written, e := r.s.stream.writeResultAppended(*r.id, 1024*(1+len(res.Items)), res)
		switch {
		case errors.Is(e, errEncodingPanicked):
			// Nothing was written: the request is answered with an error.
			r.s.logger.Error("encoding a reply", zap.String("method", r.method), zap.Error(e))
			result, werr = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "runls: internal error in %s", r.method)
		case e != nil:
			r.s.logger.Warn("sending a reply", zap.String("method", r.method), zap.Error(e))
			return nil
		case written:
			return nil
		}
	}
	if p, ok := result.(preEncoded); ok && werr == nil && r.id != nil && r.s.stream != nil {
		if data := p.EncodedJSON(); data != nil {
			// What jsonrpc2's replier does (the stream frames it, under its
			// own lock), with the result's JSON as it is.
			if _, e := r.s.stream.writeResultJSON(*r.id, data); e != nil {
				r.s.logger.Warn("sending a reply", zap.String("method", r.method), zap.Error(e))
			}
			return nil
		}
	}
	// A cancelled request's context would stop the write: reply without it.
	if e := r.reply(context.WithoutCancel(ctx), result, werr); e != nil {
		r.s.logger.Warn("sending a reply", zap.String("method", r.method), zap.Error(e))
	}
	return nil
}

// wireError gives every error the code the protocol prescribes.
func (r *replyOnce) wireError(err error) error {
	if r.cancelled.Load() {
		return jsonrpc2.NewError(protocol.CodeRequestCancelled, "runls: request cancelled")
	}
	if err == nil {
		return nil
	}
	var we *jsonrpc2.Error
	if errors.As(err, &we) && we.Code != 0 {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return jsonrpc2.NewError(protocol.CodeRequestCancelled, "runls: request cancelled")
	}
	// protocol.ServerHandler answers params it cannot decode with an error
	// that names the parse error but carries no code.
	if rest, ok := strings.CutPrefix(err.Error(), jsonrpc2.ErrParse.Message+": "); ok {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "runls: invalid params of %s: %s", r.method, rest)
	}
	return jsonrpc2.Errorf(jsonrpc2.InternalError, "runls: %s: %v", r.method, err)
}
