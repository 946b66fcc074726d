package mcpserver

// This file holds the stdio transport. The SDK's own (mcp.StdioTransport)
// has two traps: a line it cannot decode ends the session, and when stdin
// ends it drops the answers to the requests it has read but not answered
// yet (go-sdk issue 1061), so a client that writes its requests and closes
// stdin gets nothing. Stdio reads the lines itself: it answers a line that
// is not a JSON-RPC message with a JSON-RPC error and passes only messages
// the SDK decodes, and it holds stdin's end back from the SDK until every
// request read has been answered.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessageBytes bounds one message (a line): a longer one is refused
// without being kept (the SDK's own bound is 16 MiB too).
const MaxMessageBytes = 16 << 20

// DrainLimit bounds how long the answers to the requests read are waited
// for once stdin has ended.
const DrainLimit = 2 * time.Minute

// Stdio is the MCP stdio transport over In and Out (the process's stdin and
// stdout).
type Stdio struct {
	In  io.Reader
	Out io.Writer
	// DrainLimit overrides the package's DrainLimit when positive.
	DrainLimit time.Duration
}

// Connect implements mcp.Transport.
func (t *Stdio) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	w := &answerWriter{out: t.Out, pending: map[string]int{}, changed: make(chan struct{})}
	limit := t.DrainLimit
	if limit <= 0 {
		limit = DrainLimit
	}
	go pump(t.In, pw, w, limit)
	return (&mcp.IOTransport{Reader: &pipeReader{pr, t.In}, Writer: w, MaxLineLength: -1}).Connect(ctx)
}

// pipeReader is what the SDK reads: the messages pump passes on. Closing it
// closes In too, when In can be closed, so that pump's read ends.
type pipeReader struct {
	*io.PipeReader
	in io.Reader
}

func (r *pipeReader) Close() error {
	r.PipeReader.Close()
	if c, ok := r.in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// pump passes In's messages to pw, one a line, answering those it refuses;
// at In's end it waits for the answers, then ends pw.
func pump(in io.Reader, pw *io.PipeWriter, w *answerWriter, limit time.Duration) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readMessage(r)
		if tooLong {
			w.writeError(nil, -32600, fmt.Sprintf("message too large: more than %d bytes", MaxMessageBytes))
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			// Trimmed: the SDK's reader takes anything but a line end after a
			// message for trailing garbage, and ends the session.
			ids, refusal := vet(line)
			if refusal != nil {
				w.writeError(refusal.id, refusal.code, refusal.message)
			} else {
				w.expect(ids)
				if _, werr := pw.Write(append(line, '\n')); werr != nil {
					return // the session ended
				}
			}
		}
		if err != nil {
			break
		}
	}
	w.drain(limit)
	pw.Close()
}

// readMessage reads one line; a line of more than MaxMessageBytes is read
// to its end and dropped.
func readMessage(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxMessageBytes+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// refusal is the JSON-RPC error that answers a line the SDK would not take.
type refusal struct {
	id      json.RawMessage // nil: null
	code    int
	message string
}

// vet checks that the SDK will decode a line (trimmed) as a message (its reader ends
// the session at the first it cannot), with the SDK's own decoder, and
// returns the id of the request it holds, whose answer is waited for when
// stdin ends, and that of the request a cancellation names, which is not.
func vet(line []byte) (ids idChanges, refused *refusal) {
	if !json.Valid(line) {
		return ids, &refusal{code: -32700, message: "parse error: not a JSON value"}
	}
	switch line[0] {
	case '[':
		return ids, &refusal{code: -32600, message: "invalid request: batches are not supported (MCP has had none since 2025-06-18)"}
	case '{':
	default:
		return ids, &refusal{code: -32600, message: "invalid request: want a JSON-RPC 2.0 object"}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return ids, &refusal{id: usableID(line), code: -32600, message: "invalid request: " + err.Error()}
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return ids, nil // the client's answer to a call of the server's
	}
	if req.ID.IsValid() {
		ids.add = idKey(req.ID)
	}
	if req.Method == "notifications/cancelled" {
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil && id.IsValid() {
				ids.cancel = idKey(id)
			}
		}
	}
	return ids, nil
}

// idChanges are what one message changes in the requests awaiting answers.
type idChanges struct {
	add, cancel string
}

func idKey(id jsonrpc.ID) string {
	return fmt.Sprintf("%T:%v", id.Raw(), id.Raw())
}

// usableID is a refused message's id, to answer it with, when it has one
// that is a string or a number (else null).
func usableID(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return m.ID
	}
	return nil
}

// answerWriter writes the SDK's messages to Out and counts the answers to
// the requests pump passed on.
type answerWriter struct {
	mu      sync.Mutex
	out     io.Writer
	partial []byte // the start of a message written in parts
	pending map[string]int
	failed  bool          // a write to Out failed: nothing more is read
	changed chan struct{} // closed and replaced when pending shrinks or a write fails
}

func (w *answerWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.out.Write(p)
	if err != nil {
		w.failed = true
		w.signal()
		return n, err
	}
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.answered(w.partial[:i])
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) == 0 {
		w.partial = nil
	}
	return n, nil
}

// Close is the session's end; Out (stdout) stays open.
func (w *answerWriter) Close() error { return nil }

// answered counts a message written, when it answers a request.
func (w *answerWriter) answered(line []byte) {
	if msg, err := jsonrpc.DecodeMessage(line); err == nil {
		if resp, ok := msg.(*jsonrpc.Response); ok {
			w.done(idKey(resp.ID))
		}
	}
}

func (w *answerWriter) done(id string) {
	if w.pending[id] == 0 {
		return
	}
	if w.pending[id]--; w.pending[id] == 0 {
		delete(w.pending, id)
	}
	w.signal()
}

func (w *answerWriter) signal() {
	close(w.changed)
	w.changed = make(chan struct{})
}

func (w *answerWriter) expect(c idChanges) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c.add != "" {
		w.pending[c.add]++
	}
	if c.cancel != "" {
		w.done(c.cancel)
	}
}

// writeError answers a refused line.
func (w *answerWriter) writeError(id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	if err != nil {
		return
	}
	_, _ = w.Write(append(msg, '\n'))
}

// drain waits until every request passed on is answered, a write fails, or
// limit passes.
func (w *answerWriter) drain(limit time.Duration) {
	deadline := time.After(limit)
	for {
		w.mu.Lock()
		idle := len(w.pending) == 0 || w.failed
		changed := w.changed
		w.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			return
		}
	}
}
