package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"runls/internal/jsonappend"
)

// maxContentLength bounds one message's body; a larger Content-Length is
// taken as a broken header. It is kept high because a didOpen carries the
// whole text of the file opened, and agents' logs run to hundreds of MB: the
// bound costs nothing, since a body's memory grows with the bytes that
// arrive (readBody), not with the length declared.
const maxContentLength = 256 << 20

// firstBodyChunk is the memory a body starts with; it doubles as bytes
// arrive. Most messages fit in it.
const firstBodyChunk = 32 << 10

// maxHeaderLine is how much of one line the header reader keeps: a line
// that is no header is what is left of a body (of a wrong or too large
// Content-Length), which can be of any length, and only a header at its end
// matters.
const maxHeaderLine = 4 << 10

// headerContentLength is matched without regard to case, as HTTP headers are.
const headerContentLength = "content-length:"

// stream is a jsonrpc2.Stream that survives bad input. jsonrpc2.NewStream's Read
// returns an error for a malformed body or a broken header, and jsonrpc2.Conn
// closes the connection on any Read error: one bad message from an editor would
// end the server. This stream answers a body that is not JSON with a parse error
// (-32700) and a JSON body that is not a JSON-RPC message with an invalid
// request error (-32600), then reads on; after a broken header or a wrong
// Content-Length it finds the next "Content-Length:" header and reads on from
// there. Only a failure of the underlying reader ends it.
//
// Writes are queued and sent by a goroutine of their own, so that the reader
// does not wait on the client: a client that answers a server request
// (window/workDoneProgress/create) while the server answers one of its own
// would otherwise block both sides on a pipe without a buffer (a
// run/search reply, when nothing is queued before it, is written by the
// goroutine that made it: writeResultAppended; the reader writes one only
// for a search it answers itself, inline.go, while the messages that
// follow are read beside it once 2 ms have passed). Writes go
// through the package's own framing (jsonrpc2.NewStream); only the
// error answers to messages jsonrpc2 cannot represent (their id is null) are
// framed here.
//
// The queue is bounded for a client that stops reading (maxQueuedBytes):
// while it holds that much, notifications the server sends on its own
// (progress, logMessage, diagnostics) are dropped, and the reader reads no
// new message, since each request read could only add a reply. Replies and
// the server's own requests are never dropped.
type stream struct {
	conn   io.ReadWriteCloser
	in     *bufio.Reader
	out    jsonrpc2.Stream // frames into frame, under writeMu
	frame  bytes.Buffer
	queue  *sendQueue
	logger *zap.Logger

	// writeMu orders the writes of the connection (made under jsonrpc2's own
	// lock) with the error answers Read writes.
	writeMu sync.Mutex

	// spare is the buffer of the last answer written directly
	// (writeResultAppended), which the next one is made in, or nil.
	spare atomic.Pointer[frameBuffer]

	// readMu makes one goroutine at a time read the connection: jsonrpc2's
	// loop (Read), or one reading beside a request the loop answers itself
	// (readAside, inline.go). kept holds what that one read and left to the
	// loop, in order: Read returns it before it reads on. It has its own
	// lock, keptMu: a response kept while the reader aside reads on must
	// reach the loop as soon as the loop is back, not once the client sends
	// again and that read ends.
	readMu sync.Mutex
	keptMu sync.Mutex
	kept   []readMessage
}

// readMessage is one Read's outcome, kept for the loop (readAside).
type readMessage struct {
	msg jsonrpc2.Message
	n   int64
	err error
}

// frameBuffer is an answer's buffer kept for the next answer: a cold
// run/search's frame was 6 KB made and zeroed a request (about 2 µs of the
// answer's 12 µs besides its JSON, issue 33), where the last one's buffer
// is free once written, and still in the caches.
type frameBuffer struct{ b []byte }

// maxSpareFrame bounds the buffer kept: a large answer's (topK 1000, some
// 10 MB) is not held between requests.
const maxSpareFrame = 64 << 10

func newStream(conn io.ReadWriteCloser, logger *zap.Logger) *stream {
	q := newSendQueue(conn, maxQueuedBytes, logger)
	s := &stream{
		conn:   conn,
		in:     bufio.NewReader(conn),
		queue:  q,
		logger: logger,
	}
	s.out = jsonrpc2.NewStream(writeOnly{&s.frame})
	return s
}

// Read returns the next well-formed message, answering and skipping bad
// ones: the first of those read aside and kept (readAside), else the next
// one from the connection.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	if m, ok := s.takeKept(); ok {
		return m.msg, m.n, m.err
	}
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if m, ok := s.takeKept(); ok { // kept by the read that held readMu
		return m.msg, m.n, m.err
	}
	return s.readNext(ctx)
}

// takeKept takes the first message kept for Read, if there is one.
func (s *stream) takeKept() (readMessage, bool) {
	s.keptMu.Lock()
	defer s.keptMu.Unlock()
	if len(s.kept) == 0 {
		return readMessage{}, false
	}
	m := s.kept[0]
	s.kept[0] = readMessage{}
	s.kept = s.kept[1:]
	return m, true
}

// keep keeps a message read aside for Read (takeKept).
func (s *stream) keep(m readMessage) {
	s.keptMu.Lock()
	defer s.keptMu.Unlock()
	s.kept = append(s.kept, m)
}

// readAside reads messages while jsonrpc2's loop answers a request itself
// (inline.go), until done reports true: each goes to take, in the order
// read, and one that take does not take (false: a response to the
// server's own request, which only the loop routes) is kept for Read, as
// is a read's error, which ends it (and is given to failed first: the
// connection is ending, and the loop learns it only once back). A message
// read once done reports true is kept too: the loop, back at Read, has it
// next. Only one goroutine reads at a time (readMu): one reading aside
// when the loop comes back holds it until its read ends, and the loop
// takes what was kept before that meanwhile.
func (s *stream) readAside(ctx context.Context, done func() bool, take func(jsonrpc2.Message) bool, failed func()) {
	for {
		s.readMu.Lock()
		if done() {
			s.readMu.Unlock()
			return
		}
		msg, n, err := s.readNext(ctx)
		if err != nil || done() || !take(msg) {
			s.keep(readMessage{msg, n, err})
		}
		s.readMu.Unlock()
		if err != nil {
			failed()
			return
		}
	}
}

// readNext reads the next well-formed message from the connection, under
// readMu.
func (s *stream) readNext(ctx context.Context) (jsonrpc2.Message, int64, error) {
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, total, err
		}
		if err := s.queue.waitRoom(ctx); err != nil {
			return nil, total, err
		}
		length, n, err := s.readHeader()
		total += n
		if err != nil {
			return nil, total, err
		}
		body, err := readBody(s.in, length)
		if err != nil {
			return nil, total, fmt.Errorf("reading a message body: %w", err)
		}
		total += int64(length)
		// jsonrpc2.DecodeMessage ignores what follows the first JSON value,
		// so validity is checked here.
		if !json.Valid(body) {
			// A Content-Length larger than the body runs into the next
			// message: give that one back to be read as a message of its own.
			if i := indexFold(body, headerContentLength); i > 0 {
				s.logger.Warn("Content-Length ran into the next message", zap.Int("declared", length), zap.Int("body", i))
				s.unread(body[i:])
				body = body[:i]
			} else if n := headerPrefixSuffix(body); n > 0 {
				// It stopped inside the next header's name: give that part back.
				s.unread(body[len(body)-n:])
				body = body[:len(body)-n]
			}
		}
		if json.Valid(body) {
			if msg, ok := decodeFast(body); ok {
				return msg, total, nil
			}
			var msg jsonrpc2.Message
			if msg, err = jsonrpc2.DecodeMessage(body); err == nil {
				return msg, total, nil
			}
		} else {
			err = errors.New("the message body is not JSON")
		}
		s.answerBad(body, err)
	}
}

// Write sends a message with the package's framing, or drops a
// notification while the queue is full.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if n, ok := msg.(*jsonrpc2.Notification); ok {
		if s.queue.dropWhenFull() {
			return 0, errNotificationDropped
		}
		return s.writeNotification(n)
	}
	if resp, ok := msg.(*jsonrpc2.Response); ok && resp.Err() == nil {
		return s.writeResult(resp)
	}
	// jsonrpc2 writes the header and the body apart: queued apart, the
	// sending goroutine could be woken for the header alone, and the
	// message cost the client two reads. The frame is queued whole.
	s.frame.Reset()
	if n, err := s.out.Write(ctx, msg); err != nil {
		return n, err
	}
	n, err := s.queue.Write(s.frame.Bytes())
	return int64(n), err
}

// writeNotification frames a notification as jsonrpc2's framing does, its
// params as they are: Notification.MarshalJSON would check, compact and
// escape them once more, which for the diagnostics a first index publishes
// (some 80 MB of JSON at 1 GB) was most of their CPU after the index, taken
// from the first searches. Diagnostics go as background frames, which
// replies overtake (sendQueue).
func (s *stream) writeNotification(n *jsonrpc2.Notification) (int64, error) {
	const head, mid = `{"jsonrpc":"2.0","method":`, `,"params":`
	params := n.Params()
	b := make([]byte, frameHeadRoom, frameHeadRoom+len(head)+len(n.Method())+2+len(mid)+len(params)+1)
	b = append(b, head...)
	b = jsonappend.String(b, n.Method(), false)
	b = append(b, mid...)
	b = appendRaw(params)(b)
	b = append(b, '}')
	frame := headFrame(b)
	m, err := s.queue.writeFrame(frame, n.Method() == protocol.MethodTextDocumentPublishDiagnostics)
	return int64(m), err
}

// waitBackground waits while more than backgroundQueued bytes of background
// frames wait for the client (or until ctx ends): a producer of them (the
// diagnostics of every file) goes at the client's pace, so that what it
// sends never fills the queue and a reply never waits for more than the
// frame being written.
func (s *stream) waitBackground(ctx context.Context) error {
	return s.queue.waitBackground(ctx, backgroundQueued)
}

// backgroundQueued is how much of background frames may wait, beyond the
// one being written: enough that the client always has the next file's.
const backgroundQueued = 1 << 20

// writeResult frames a successful response as jsonrpc2's framing does.
// Response.MarshalJSON would marshal its result, which jsonrpc2 has already
// made JSON, once more: the folding ranges of a 100 MB log (3 MB) spent some
// 10 ms there, checked and compacted again.
func (s *stream) writeResult(resp *jsonrpc2.Response) (int64, error) {
	return s.writeFramed(resp.ID(), len(resp.Result()), appendRaw(resp.Result()))
}

// writeResultJSON writes a successful response whose result is JSON
// already (a preEncoded result), ordered with the connection's other
// writes.
func (s *stream) writeResultJSON(rid jsonrpc2.ID, result json.RawMessage) (int64, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.writeFramed(rid, len(result), appendRaw(result))
}

// writeResultAppended writes a successful response whose result appends
// its own JSON (run/search's answer) into the frame, about size bytes:
// one buffer an answer, where its JSON and the frame were two. False when
// the result has no JSON (AppendJSON's false): nothing is written.
//
// The frame is made before writeMu is taken: its bytes do not depend on
// its place among the writes, a large answer's encoding does not hold up
// the reader's own replies, and a panic in it (errEncodingPanicked, nothing
// written) leaves the lock free for every later write.
func (s *stream) writeResultAppended(rid jsonrpc2.ID, size int, result appendsJSON) (n int64, written bool, err error) {
	ok := true
	buf := s.spare.Swap(nil) // its own while it is out: nil to any other answer
	if buf == nil {
		buf = &frameBuffer{}
	}
	var whole []byte // the frame's buffer, from its start
	frame, err := func() (frame []byte, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("%w: %v", errEncodingPanicked, p)
			}
		}()
		frame, whole, err = s.framedIn(buf.b, rid, size, func(b []byte) []byte {
			var out []byte
			if out, ok = result.AppendJSON(b); !ok {
				return b
			}
			return out
		})
		return frame, err
	}()
	if !ok || err != nil {
		return 0, ok && !errors.Is(err, errEncodingPanicked), err
	}
	// Its place among the connection's writes is taken under writeMu; the
	// write itself is made here, after it, when nothing is queued before it.
	s.writeMu.Lock()
	direct, err := s.queue.offer(frame)
	s.writeMu.Unlock()
	if direct {
		err = s.queue.writeOffered(frame)
		// Written: the frame's bytes are the client's now (a queued frame
		// is the queue's until it is sent).
		if cap(whole) <= maxSpareFrame {
			buf.b = whole[:0]
			s.spare.Store(buf)
		}
	}
	if err != nil {
		return 0, true, err
	}
	return int64(len(frame)), true, nil
}

// errEncodingPanicked: a result's AppendJSON panicked; nothing was written,
// and the request is answered with an internal error instead.
var errEncodingPanicked = errors.New("encoding the answer panicked")

// appendsJSON is a result that appends its own JSON, or says it has none.
type appendsJSON interface {
	AppendJSON(b []byte) ([]byte, bool)
}

// appendRaw appends a result's JSON as it is, null when it is empty.
func appendRaw(result json.RawMessage) func([]byte) []byte {
	return func(b []byte) []byte {
		if len(result) == 0 {
			return append(b, "null"...)
		}
		return append(b, result...)
	}
}

// frameHeadRoom is room enough for a frame's header ("Content-Length: ",
// up to 20 digits, "\r\n\r\n"): the body is written after it, and the
// header, once the body's length is known, at its end.
const frameHeadRoom = 40

// writeFramed frames a response of id and the result appendResult appends
// (about size bytes) in one buffer, which the queue takes as it is; the
// caller holds writeMu.
func (s *stream) writeFramed(rid jsonrpc2.ID, size int, appendResult func([]byte) []byte) (int64, error) {
	frame, err := s.framed(rid, size, appendResult)
	if err != nil {
		return 0, err
	}
	m, err := s.queue.writeFrame(frame, false)
	return int64(m), err
}

// framed is the framed response of id and the result appendResult appends
// (about size bytes), in one buffer.
func (s *stream) framed(rid jsonrpc2.ID, size int, appendResult func([]byte) []byte) ([]byte, error) {
	frame, _, err := s.framedIn(nil, rid, size, appendResult)
	return frame, err
}

// framedIn is framed, made in buf when it has room for about size bytes;
// whole is the buffer the frame ends, from its start.
func (s *stream) framedIn(buf []byte, rid jsonrpc2.ID, size int, appendResult func([]byte) []byte) (frame, whole []byte, err error) {
	id, err := rid.MarshalJSON() // what json.Marshal(&rid) writes, without its copy
	if err != nil {
		return nil, nil, fmt.Errorf("marshaling a response id: %w", err)
	}
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
	if need := frameHeadRoom + len(head) + len(id) + len(mid) + size + 1; cap(buf) >= need {
		frame = buf[:frameHeadRoom] // its header is written over
	} else {
		frame = make([]byte, frameHeadRoom, need)
	}
	frame = append(frame, head...)
	frame = append(frame, id...)
	frame = append(frame, mid...)
	frame = appendResult(frame)
	frame = append(frame, '}')
	return headFrame(frame), frame, nil
}

// headFrame writes the header of the body that follows frameHeadRoom bytes
// of b into their end, and returns the frame.
func headFrame(b []byte) []byte {
	var hb [frameHeadRoom]byte
	header := append(hb[:0], "Content-Length: "...)
	header = strconv.AppendInt(header, int64(len(b)-frameHeadRoom), 10)
	header = append(header, "\r\n\r\n"...)
	start := frameHeadRoom - len(header)
	copy(b[start:], header)
	return b[start:]
}

// Close sends what is queued (waiting at most closeFlushTimeout for the
// client to take it), then closes the underlying connection.
func (s *stream) Close() error {
	s.queue.close(closeFlushTimeout)
	err := s.conn.Close()
	// Closing the connection ends a write blocked on a pipe or a socket; a
	// client that reads nothing any more must not hold the server up.
	select {
	case <-s.queue.done:
	case <-time.After(closeFlushTimeout):
		s.logger.Warn("a write to the client is still blocked")
	}
	return err
}

// readHeader reads header lines up to the empty line that ends them and returns
// the Content-Length. Lines that are not headers are skipped with a log line:
// they are what is left of a message whose Content-Length was wrong, and the
// next header may follow them on the same line (bodies end without a newline).
func (s *stream) readHeader() (length int, total int64, err error) {
	length = -1
	inHeader := false // a header line has been read since the last resync
	for {
		line, dropped, err := s.readLine()
		total += int64(len(line)) + dropped
		if err != nil {
			if errors.Is(err, io.EOF) && strings.TrimSpace(line) == "" && dropped == 0 && !inHeader {
				return 0, total, io.EOF
			}
			return 0, total, fmt.Errorf("reading a message header: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if length >= 0 {
				return length, total, nil
			}
			if inHeader {
				s.logger.Warn("message header without a valid Content-Length: looking for the next message")
				inHeader = false
			}
			continue
		}
		if i := indexFold([]byte(line), headerContentLength); i >= 0 {
			if skipped := int64(i) + dropped; skipped > 0 {
				s.logger.Warn("skipped bytes before a message header", zap.Int64("bytes", skipped))
			}
			value := strings.TrimSpace(line[i+len(headerContentLength):])
			n, perr := strconv.Atoi(value)
			inHeader = true
			if perr != nil || n <= 0 || n > maxContentLength {
				s.logger.Warn("bad Content-Length", zap.String("value", value))
				length = -1
				continue
			}
			length = n
			continue
		}
		if inHeader && isHeaderLine(line) {
			continue // Content-Type and any other header: nothing to do
		}
		s.logger.Warn("skipped a line that is not a message header", zap.Int64("bytes", int64(len(line))+dropped))
		inHeader = false
		length = -1
	}
}

// readLine reads up to and including the next newline, keeping only the
// last maxHeaderLine bytes of the line; dropped counts the bytes it did not
// keep.
func (s *stream) readLine() (line string, dropped int64, err error) {
	var kept []byte
	for {
		chunk, err := s.in.ReadSlice('\n')
		kept = append(kept, chunk...)
		if over := len(kept) - maxHeaderLine; over > 0 {
			dropped += int64(over)
			kept = kept[:copy(kept, kept[over:])]
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return string(kept), dropped, err
		}
	}
}

// readBody reads a body of n bytes into memory that grows as they arrive:
// a header alone can declare maxContentLength, and allocating that before a
// byte of the body came would let any client make the server take it.
func readBody(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, firstBodyChunk))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(n-len(buf), cap(buf)))
		}
		m, err := r.Read(buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if err != nil && len(buf) < n {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return buf, nil
}

// unread puts b back before what is still to be read.
func (s *stream) unread(b []byte) {
	rest := append([]byte(nil), b...)
	s.in = bufio.NewReader(io.MultiReader(bytes.NewReader(rest), s.in))
}

// answerBad answers a message jsonrpc2 could not decode, as JSON-RPC 2.0
// prescribes: -32700 with a null id when the body is not JSON, -32600 (with
// the message's id when it has a usable one) when it is JSON but no message.
func (s *stream) answerBad(body []byte, cause error) {
	code, message := jsonrpc2.ParseError, "parse error: the message body is not JSON"
	id := json.RawMessage("null")
	if json.Valid(body) {
		code, message = jsonrpc2.InvalidRequest, "invalid request: "+cause.Error()
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &probe) == nil && len(probe.ID) > 0 &&
			(probe.ID[0] == '"' || probe.ID[0] == '-' || (probe.ID[0] >= '0' && probe.ID[0] <= '9')) {
			id = probe.ID
		}
	}
	s.logger.Warn("bad message", zap.Int64("code", int64(code)), zap.Error(cause))
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc2.Error `json:"error"`
	}{"2.0", id, jsonrpc2.NewError(code, message)})
	if err != nil {
		s.logger.Error("encoding an error answer", zap.Error(err))
		return
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, err := fmt.Fprintf(s.queue, "Content-Length: %d\r\n\r\n%s", len(data), data); err != nil {
		s.logger.Warn("writing an error answer", zap.Error(err))
	}
}

// isHeaderLine reports whether line looks like "Name: value" with a token name.
func isHeaderLine(line string) bool {
	name, _, ok := strings.Cut(line, ":")
	if !ok || name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// indexFold is bytes.Index ignoring ASCII case of needle (given in lower case).
func indexFold(b []byte, needle string) int {
	n := len(needle)
	for i := 0; i+n <= len(b); i++ {
		if c := b[i]; c != needle[0] && c+('a'-'A') != needle[0] {
			continue
		}
		if strings.EqualFold(string(b[i:i+n]), needle) {
			return i
		}
	}
	return -1
}

// closeFlushTimeout bounds how long Close waits for queued messages to go out.
const closeFlushTimeout = time.Second

// maxQueuedBytes bounds what waits for a client that does not read before
// notifications are dropped and no new message is read: far more than a
// client that reads falls behind by (the largest answer, topK 1000 pieces of
// up to 8 KiB, is about 10 MB), little beside the index.
const maxQueuedBytes = 32 << 20

var (
	errQueueClosed         = errors.New("the connection is closed")
	errNotificationDropped = errors.New("notification dropped: the client is not reading")
)

// sendQueue is an io.Writer that never blocks: a goroutine writes what it is
// given to w, in order (or the caller writes its own frame, after offer,
// when nothing is queued before it). It counts the bytes it holds against limit; only its
// users act on that (dropWhenFull, waitRoom), so that a write never fails
// half-way through a message.
//
// Background frames (the diagnostics) are the one exception to the order:
// every other frame goes ahead of those not yet begun, and they are written
// one at a time. Right after a first index the server publishes every
// record file's diagnostics (80 MB of them at 1 GB, where stack traces give
// thousands of Hints a file, all published: spec §9), and a search's reply
// queued behind them waited for the client to read them all: 10–25 ms for
// the first seconds (issue 13's p99). Nothing orders a diagnostic against
// a reply; diagnostics keep their order among themselves.
type sendQueue struct {
	w      io.Writer
	limit  int
	logger *zap.Logger
	wake   chan struct{}
	room   chan struct{} // signalled when queued falls below limit
	done   chan struct{}

	mu         sync.Mutex
	pending    [][]byte      // frames to write, in order, before any of bg
	bg         [][]byte      // background frames to write, in order, one at a time
	queued     int           // bytes written to the queue and not yet to w
	background int           // of queued, the background frames' bytes
	bgSent     chan struct{} // closed and replaced when a background frame is sent
	dropped    int           // notifications dropped since the queue was last below limit
	closed     bool
	err        error
	writing    bool // a batch or an offered frame is being written to w
}

func newSendQueue(w io.Writer, limit int, logger *zap.Logger) *sendQueue {
	q := &sendQueue{w: w, limit: limit, logger: logger,
		wake: make(chan struct{}, 1), room: make(chan struct{}, 1), done: make(chan struct{}),
		bgSent: make(chan struct{})}
	go q.run()
	return q
}

// dropWhenFull reports whether the queue holds limit bytes or more, counting
// a dropped notification when it does; the first drop is logged.
func (q *sendQueue) dropWhenFull() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queued < q.limit {
		return false
	}
	if q.dropped == 0 {
		q.logger.Warn("the client is not reading: dropping notifications and reading no request until it does",
			zap.Int("queuedBytes", q.queued))
	}
	q.dropped++
	return true
}

// waitRoom waits until the queue holds less than limit bytes, or is done.
func (q *sendQueue) waitRoom(ctx context.Context) error {
	for {
		q.mu.Lock()
		ok := q.queued < q.limit || q.closed || q.err != nil
		q.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-q.room:
		case <-q.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (q *sendQueue) Write(p []byte) (int, error) {
	return q.writeFrame(append([]byte(nil), p...), false)
}

// writeFrame queues p itself, which the caller no longer uses (a frame
// made for the queue: a copy of an answer was as large as the answer); a
// background frame goes last, any other ahead of the background frames
// queued.
func (q *sendQueue) writeFrame(p []byte, background bool) (int, error) {
	q.mu.Lock()
	switch {
	case q.err != nil:
		q.mu.Unlock()
		return 0, q.err
	case q.closed:
		q.mu.Unlock()
		return 0, errQueueClosed
	}
	q.queued += len(p)
	if background {
		q.background += len(p)
		q.bg = append(q.bg, p)
	} else {
		q.pending = append(q.pending, p)
	}
	q.mu.Unlock()
	q.signal()
	return len(p), nil
}

// offer takes p (a frame made for the queue) in its place after what is
// queued. True when nothing was queued or being written: the caller then
// writes p itself (writeOffered) and the queue writes what follows it
// after that. A reply written by the goroutine that made it does not wake
// the queue's (issue 33: a wake-up of another thread costs more in this
// VM than the write); only a goroutine that may wait on the client may be
// offered the write: a request's worker, or the reader answering a search
// itself, beside which the messages that follow are read once its budget
// has passed (inline.go).
func (q *sendQueue) offer(p []byte) (bool, error) {
	q.mu.Lock()
	switch {
	case q.err != nil:
		q.mu.Unlock()
		return false, q.err
	case q.closed:
		q.mu.Unlock()
		return false, errQueueClosed
	}
	q.queued += len(p)
	if !q.writing && len(q.pending) == 0 && len(q.bg) == 0 {
		q.writing = true
		q.mu.Unlock()
		return true, nil
	}
	q.pending = append(q.pending, p)
	q.mu.Unlock()
	q.signal()
	return false, nil
}

// waitBackground waits while more than max bytes of background frames are
// queued (every waiter is woken at each one sent), until ctx ends or the
// queue is closed or failed, which it reports: nothing more can be sent.
func (q *sendQueue) waitBackground(ctx context.Context, max int) error {
	for {
		q.mu.Lock()
		err, sent := q.err, q.bgSent
		if err == nil && q.closed {
			err = errQueueClosed
		}
		ok := q.background <= max
		q.mu.Unlock()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-sent:
		case <-q.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// writeOffered writes p, which offer gave the caller to write, and hands
// what was queued meanwhile to the queue's goroutine.
func (q *sendQueue) writeOffered(p []byte) error {
	_, err := q.w.Write(p)
	q.mu.Lock()
	q.writing = false
	if err != nil {
		q.fail(err)
	}
	more := len(q.pending) > 0 || len(q.bg) > 0 || q.closed
	q.mu.Unlock()
	if err == nil {
		q.sent(len(p), false)
	}
	if more {
		q.signal()
	}
	if err != nil {
		return fmt.Errorf("write to the client: %w", err)
	}
	return nil
}

func (q *sendQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// fail ends the queue after a failed write; q.mu is held.
func (q *sendQueue) fail(err error) {
	q.err = fmt.Errorf("write to the client: %w", err)
	q.pending, q.bg = nil, nil
	q.queued = 0
	q.background = 0
	q.closed = true
	q.wakeBackground()
}

func (q *sendQueue) run() {
	defer close(q.done)
	for {
		q.mu.Lock()
		if q.writing { // an offered frame is being written: wait for it
			q.mu.Unlock()
			<-q.wake
			continue
		}
		batch, background := q.takeBatch()
		closed := q.closed
		q.writing = len(batch) > 0
		q.mu.Unlock()
		if len(batch) == 0 {
			if closed {
				return
			}
			<-q.wake
			continue
		}
		for i, b := range batch {
			if _, err := q.w.Write(b); err != nil {
				q.mu.Lock()
				q.writing = false
				q.fail(err)
				q.mu.Unlock()
				return
			}
			batch[i] = nil // what is sent is not held until the batch ends
			q.sent(len(b), background)
		}
		q.mu.Lock()
		q.writing = false
		q.mu.Unlock()
	}
}

// takeBatch takes what run writes next: every frame but the background
// ones, or else the first background frame alone, so that a frame queued
// meanwhile waits for one background frame at most; q.mu is held.
func (q *sendQueue) takeBatch() (batch [][]byte, background bool) {
	if len(q.pending) > 0 {
		batch, q.pending = q.pending, nil
		return batch, false
	}
	if len(q.bg) == 0 {
		return nil, false
	}
	batch = [][]byte{q.bg[0]}
	q.bg[0] = nil // taken: not held by the queue's array
	if q.bg = q.bg[1:]; len(q.bg) == 0 {
		q.bg = nil
	}
	return batch, true
}

// wakeBackground wakes every waitBackground; q.mu is held.
func (q *sendQueue) wakeBackground() {
	close(q.bgSent)
	q.bgSent = make(chan struct{})
}

// sent counts n bytes out of the queue (a background frame's when
// background), and tells a waiting reader when that makes room and the
// producers of background frames when it was one.
func (q *sendQueue) sent(n int, background bool) {
	q.mu.Lock()
	wasFull := q.queued >= q.limit
	q.queued -= n
	if background {
		q.background -= n
		q.wakeBackground()
	}
	room := wasFull && q.queued < q.limit
	dropped := 0
	if room {
		dropped, q.dropped = q.dropped, 0
	}
	q.mu.Unlock()
	if !room {
		return
	}
	if dropped > 0 {
		q.logger.Warn("the client reads again", zap.Int("droppedNotifications", dropped))
	}
	select {
	case q.room <- struct{}{}:
	default:
	}
}

// close stops taking writes and waits up to timeout for the queue to empty.
func (q *sendQueue) close(timeout time.Duration) {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
	select {
	case <-q.done:
	case <-time.After(timeout):
	}
}

// writeOnly lends a writer to jsonrpc2.NewStream, which wants a whole
// connection but is only used here to write.
type writeOnly struct{ io.Writer }

func (writeOnly) Read([]byte) (int, error) { return 0, io.EOF }
func (writeOnly) Close() error             { return nil }

// headerPrefixSuffix is the length of the longest end of b that begins the
// Content-Length header's name.
func headerPrefixSuffix(b []byte) int {
	for n := min(len(headerContentLength)-1, len(b)); n > 0; n-- {
		if strings.EqualFold(string(b[len(b)-n:]), headerContentLength[:n]) {
			return n
		}
	}
	return 0
}
