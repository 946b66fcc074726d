package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"
)

// allocated returns the bytes the process allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func framed(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

// TestStreamMemoryFollowsBytes: what a message costs follows the bytes that
// arrive, not the Content-Length declared. A header declaring the largest
// body followed by a few bytes allocates a few KiB, not 256 MiB; a length
// over the limit is a broken header, and the body after it (one long line)
// is skipped with bounded memory while the next message is found.
func TestStreamMemoryFollowsBytes(t *testing.T) {
	const bound = 1 << 20 // far below maxContentLength, and below the 8 MiB skipped
	good := `{"jsonrpc":"2.0","id":7,"method":"run/info","params":{}}`
	tests := []struct {
		name    string
		input   string
		wantMsg bool // Read returns the good message; otherwise the input's end
	}{
		{"maximum declared, a few bytes, EOF",
			fmt.Sprintf("Content-Length: %d\r\n\r\n{\"a\":1}", maxContentLength), false},
		{"maximum declared, a few bytes",
			fmt.Sprintf("Content-Length: %d\r\n\r\n%s", maxContentLength, good), false},
		{"over the maximum, 8 MiB body on one line, then a message",
			fmt.Sprintf("Content-Length: %d\r\n\r\n%s", maxContentLength+1, strings.Repeat("x", 8<<20)) + framed(good), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := &inOut{Reader: strings.NewReader(tt.input)}
			s := newStream(conn, zap.NewNop())
			defer s.Close()
			var msg jsonrpc2.Message
			var err error
			n := allocated(func() { msg, _, err = s.Read(context.Background()) })
			if tt.wantMsg {
				if err != nil {
					t.Fatalf("Read: %v, want the message after the skipped bytes", err)
				}
				if call, ok := msg.(*jsonrpc2.Call); !ok || call.Method() != "run/info" {
					t.Fatalf("Read = %#v, want the run/info call", msg)
				}
			} else if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Read: %v, want an unexpected EOF in the body", err)
			}
			t.Logf("allocated %d bytes for %d bytes of input", n, len(tt.input))
			if n > bound {
				t.Errorf("Read allocated %d bytes, want at most %d", n, bound)
			}
		})
	}
}

// TestReadBody: a body is read whole and exactly, however its bytes arrive,
// at sizes below, at and far above the first chunk.
func TestReadBody(t *testing.T) {
	for _, n := range []int{1, firstBodyChunk - 1, firstBodyChunk, firstBodyChunk + 1, 3<<20 + 5} {
		body := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		for _, slow := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d bytes, one byte a read %v", n, slow), func(t *testing.T) {
				var r io.Reader = bytes.NewReader(append(append([]byte(nil), body...), "rest"...))
				if slow {
					if n > 1<<20 {
						t.Skip("too slow a byte at a time")
					}
					r = iotest.OneByteReader(r)
				}
				got, err := readBody(r, n)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, body) {
					t.Fatalf("read %d bytes differing from the %d sent", len(got), n)
				}
				if cap(got) > 2*n+firstBodyChunk {
					t.Errorf("capacity %d for a body of %d bytes", cap(got), n)
				}
				rest, _ := io.ReadAll(r)
				if string(rest) != "rest" {
					t.Errorf("read past the body: %q left, want %q", rest, "rest")
				}
			})
		}
	}
	if _, err := readBody(strings.NewReader("abc"), 10); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short body: %v, want io.ErrUnexpectedEOF", err)
	}
}

// pipeConn is a connection whose both ends the test holds: it writes what the
// server reads to in, and reads what the server writes from out.
type pipeConn struct {
	*io.PipeReader // the server's input
	out            *io.PipeWriter
}

func (c pipeConn) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c pipeConn) Close() error {
	c.PipeReader.Close()
	return c.out.Close()
}

// pipedStream is a stream over pipes whose other ends the test holds: it
// writes the server's input to in and reads its output from out (a pipe
// with no buffer: a write waits for the test's read). All are closed when
// the test ends.
func pipedStream(t *testing.T) (s *stream, in *io.PipeWriter, out *io.PipeReader) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s = newStream(pipeConn{inR, outW}, zap.NewNop())
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		s.Close()
	})
	return s, inW, outR
}

// TestSendQueueBound: a client that stops reading while the server sends
// notifications (64 MiB of them, twice the bound) holds the queue, and the
// process's heap, within maxQueuedBytes plus one message; notifications are
// dropped past the bound, a reply is not; no request is read until the client
// reads again, and then everything goes on: the reply arrives, the request is
// read, and notifications are sent again.
func TestSendQueueBound(t *testing.T) {
	s, inW, outR := pipedStream(t)
	heapBefore := heapAfterGC()

	const size = 64 << 10
	payload := strings.Repeat("n", size)
	dropped := 0
	for range 2 * maxQueuedBytes / size {
		note, err := jsonrpc2.NewNotification("window/logMessage", map[string]any{"type": 3, "message": payload})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(context.Background(), note); errors.Is(err, errNotificationDropped) {
			dropped++
		} else if err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	if dropped == 0 {
		t.Fatal("no notification was dropped: the queue is not bounded")
	}
	reply, err := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(41), payload, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(context.Background(), reply); err != nil {
		t.Fatalf("a reply past the bound: %v, want it queued", err)
	}
	s.queue.mu.Lock()
	queued := s.queue.queued
	s.queue.mu.Unlock()
	heap := heapAfterGC()
	t.Logf("%d notifications dropped; queue %d bytes; heap grew %d bytes", dropped, queued, int64(heap)-int64(heapBefore))
	if limit := maxQueuedBytes + 3*size; queued > limit {
		t.Errorf("queue holds %d bytes, want at most %d", queued, limit)
	}
	if limit := uint64(maxQueuedBytes + 16<<20); heap > heapBefore+limit {
		t.Errorf("heap grew by %d bytes, want at most %d", heap-heapBefore, limit)
	}

	// A request sent now is not read while the queue is full.
	go func() { _, _ = io.WriteString(inW, framed(`{"jsonrpc":"2.0","id":7,"method":"run/info","params":{}}`)) }()
	read := readAsync(t, s)
	select {
	case msg := <-read:
		t.Fatalf("a request was read while the queue was full: %v", msg)
	case <-time.After(200 * time.Millisecond):
	}

	// The client reads again: the reply comes, then the request is read.
	gotReply := make(chan bool, 1)
	go func() {
		dec := bufio.NewReader(outR)
		for {
			body, err := readFrame(dec)
			if err != nil {
				gotReply <- false
				return
			}
			// Only a body naming the id is decoded: under the race
			// detector, decoding every 64 KiB notification of the 32 MiB
			// queue took longer than the wait below at load 16.
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if bytes.Contains(body, []byte(`"id":41`)) && json.Unmarshal(body, &m) == nil && string(m.ID) == "41" {
				gotReply <- true
				_, _ = io.Copy(io.Discard, dec)
				return
			}
		}
	}()
	select {
	case ok := <-gotReply:
		if !ok {
			t.Fatal("the reply never came")
		}
	case <-time.After(2 * time.Minute): // a guard against a hang, not a timing
		t.Fatal("the reply never came")
	}
	select {
	case msg := <-read:
		if call, ok := msg.(*jsonrpc2.Call); !ok || call.Method() != "run/info" {
			t.Fatalf("Read = %#v, want the run/info call", msg)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the request was not read after the client read again")
	}
	note, _ := jsonrpc2.NewNotification("window/logMessage", map[string]any{"type": 3, "message": "again"})
	if _, err := s.Write(context.Background(), note); err != nil {
		t.Errorf("a notification after the queue emptied: %v", err)
	}
}

func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// readFrame reads one framed message's body.
func readFrame(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(v)
		}
	}
	body := make([]byte, length)
	_, err := io.ReadFull(r, body)
	return body, err
}

// gatedWriter records what is written to it, holds a write while its gate
// is closed, and counts writes made at once (never more than one: the
// queue's goroutine and a writer of an offered frame take turns).
type gatedWriter struct {
	mu      sync.Mutex
	out     bytes.Buffer
	gate    chan struct{} // a write waits for a value or a close
	writing atomic.Int32
	overlap atomic.Bool
	entered chan struct{} // told each time a write begins
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	if w.writing.Add(1) > 1 {
		w.overlap.Store(true)
	}
	defer w.writing.Add(-1)
	select {
	case w.entered <- struct{}{}:
	default:
	}
	<-w.gate
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(p)
}

func (w *gatedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

// TestOfferedWrite: a frame offered to an idle queue is written by the
// caller, before writeOffered returns; one offered while the queue's
// goroutine writes, or while another offered frame is written, waits its
// turn behind it; nothing is written twice at once, and the client gets
// every frame in the order the frames took their places.
func TestOfferedWrite(t *testing.T) {
	w := &gatedWriter{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	q := newSendQueue(w, maxQueuedBytes, zap.NewNop())
	defer q.close(time.Second)

	// Idle: the caller writes.
	direct, err := q.offer([]byte("a"))
	if err != nil || !direct {
		t.Fatalf("offer to an idle queue = %v, %v; want the caller to write", direct, err)
	}
	go func() { w.gate <- struct{}{} }()
	if err := q.writeOffered([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if got := w.String(); got != "a" {
		t.Fatalf("after writeOffered the client has %q, want %q", got, "a")
	}

	// The queue's goroutine writes "b" (held at the gate): "c" offered now
	// is queued behind it, and "d" queued after "c".
	if _, err := q.writeFrame([]byte("b"), false); err != nil {
		t.Fatal(err)
	}
	<-w.entered
	if direct, err := q.offer([]byte("c")); err != nil || direct {
		t.Fatalf("offer while the queue writes = %v, %v; want it queued", direct, err)
	}
	if _, err := q.writeFrame([]byte("d"), false); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		w.gate <- struct{}{}
	}
	waitFor(t, func() bool { return w.String() == "abcd" }, w.String)

	// An offered "e" held at the gate: "f" offered and "g" queued meanwhile
	// wait for it, then go out in order.
	if direct, err := q.offer([]byte("e")); err != nil || !direct {
		t.Fatalf("offer to an idle queue = %v, %v; want the caller to write", direct, err)
	}
	done := make(chan error, 1)
	go func() { done <- q.writeOffered([]byte("e")) }()
	<-w.entered
	if direct, err := q.offer([]byte("f")); err != nil || direct {
		t.Fatalf("offer while an offered frame is written = %v, %v; want it queued", direct, err)
	}
	if _, err := q.writeFrame([]byte("g"), false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the queue's goroutine, were it to write now, would overlap
	for range 3 {
		w.gate <- struct{}{}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return w.String() == "abcdefg" }, w.String)
	if w.overlap.Load() {
		t.Error("two writes were made at once")
	}
	q.mu.Lock()
	queued := q.queued
	q.mu.Unlock()
	if queued != 0 {
		t.Errorf("queue counts %d bytes after all were written, want 0", queued)
	}
}

// waitFor waits (a guard of a minute against a hang, not a timing) until
// ok, or fails with what got says.
func waitFor(t *testing.T, ok func() bool, got func() string) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !ok(); {
		if time.Now().After(end) {
			t.Fatalf("waited a minute; the client has %q", got())
		}
		time.Sleep(time.Millisecond)
	}
}

// appendedResult is a result that appends its own JSON (as run/search's).
type appendedResult string

func (r appendedResult) AppendJSON(b []byte) ([]byte, bool) {
	return strconv.AppendQuote(b, string(r)), true
}

// TestAppendedReplyLeavesReaderFree: a reply the worker writes itself
// (writeResultAppended) to a client that does not read holds that worker
// only: the stream still reads the next message and queues other replies
// without waiting, and once the client reads it gets the replies in the
// order they were made.
func TestAppendedReplyLeavesReaderFree(t *testing.T) {
	s, inW, outR := pipedStream(t) // unbuffered: a write waits for the client's read
	written := make(chan error, 1)
	go func() {
		_, _, err := s.writeResultAppended(jsonrpc2.NewNumberID(1), 16, appendedResult("first"))
		written <- err
	}()
	go func() { _, _ = io.WriteString(inW, framed(`{"jsonrpc":"2.0","id":2,"method":"run/info","params":{}}`)) }()
	read := readAsync(t, s)
	select {
	case msg := <-read:
		if call, ok := msg.(*jsonrpc2.Call); !ok || call.Method() != "run/info" {
			t.Fatalf("Read = %#v, want the run/info call", msg)
		}
	case <-time.After(time.Minute): // a guard against a hang, not a timing
		t.Fatal("the stream read nothing while a worker's reply waited for the client")
	}
	queued := make(chan error, 1)
	go func() {
		reply, _ := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(2), "second", nil)
		_, err := s.Write(context.Background(), reply)
		queued <- err
	}()
	select {
	case err := <-queued:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a reply made by the reader waited for the client")
	}
	dec := bufio.NewReader(outR)
	var got []string
	for range 2 {
		body, err := readFrame(dec)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Result string `json:"result"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		got = append(got, m.Result)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "first,second" {
		t.Errorf("replies %v, want first then second", got)
	}
}

// panickingResult is a result whose encoding panics.
type panickingResult struct{}

func (panickingResult) AppendJSON([]byte) ([]byte, bool) { panic("encoding failed") }

// TestAppendedReplyPanicLeavesWritesFree: a panic while a worker encodes
// its reply is told as errEncodingPanicked with nothing written (the
// request is then answered with an internal error), and leaves the
// stream's writes free: the next reply is written. Fails when the encoding
// runs under writeMu without an unlock on the way out.
func TestAppendedReplyPanicLeavesWritesFree(t *testing.T) {
	s, _, outR := pipedStream(t)
	if n, written, err := s.writeResultAppended(jsonrpc2.NewNumberID(1), 16, panickingResult{}); !errors.Is(err, errEncodingPanicked) || written || n != 0 {
		t.Fatalf("a panicking encoding: %d bytes, written %v, error %v; want nothing written and errEncodingPanicked", n, written, err)
	}
	written := make(chan error, 1)
	go func() {
		reply, _ := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(2), "next", nil)
		_, err := s.Write(context.Background(), reply)
		written <- err
	}()
	body, err := readFrame(bufio.NewReader(outR))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"next"`) {
		t.Fatalf("the client got %q, want the next reply", body)
	}
	select {
	case err := <-written:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a guard against a hang, not a timing
		t.Fatal("the next reply's write did not return")
	}
}

// readAsync reads the stream's next message in a goroutine of its own; the
// channel gets it (nil after a failed read, which fails the test).
func readAsync(t *testing.T, s *stream) <-chan jsonrpc2.Message {
	t.Helper()
	read := make(chan jsonrpc2.Message, 1)
	go func() {
		msg, _, err := s.Read(context.Background())
		if err != nil {
			t.Errorf("Read: %v", err)
		}
		read <- msg
	}()
	return read
}

// TestRepliesOvertakeDiagnostics: while a background frame (a file's
// diagnostics) is written, a reply and other messages queued go out before
// the background frames queued after it, in their own order; the
// background frames keep theirs and go out one at a time; waitBackground
// holds a producer while more than its bound of them is queued.
func TestRepliesOvertakeDiagnostics(t *testing.T) {
	w := &gatedWriter{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	q := newSendQueue(w, maxQueuedBytes, zap.NewNop())
	defer q.close(time.Second)

	if _, err := q.writeFrame([]byte("D"), true); err != nil {
		t.Fatal(err)
	}
	<-w.entered // "D" is being written
	for _, f := range []struct {
		b          string
		background bool
	}{{"E", true}, {"F", true}, {"n", false}} {
		if _, err := q.writeFrame([]byte(f.b), f.background); err != nil {
			t.Fatal(err)
		}
	}
	if direct, err := q.offer([]byte("r")); err != nil || direct {
		t.Fatalf("offer while the queue writes = %v, %v; want it queued", direct, err)
	}

	waited := make(chan error, 1)
	go func() { waited <- q.waitBackground(context.Background(), 1) }()
	select {
	case err := <-waited:
		t.Fatalf("waitBackground returned (%v) with three bytes of background frames queued over a bound of one", err)
	case <-time.After(20 * time.Millisecond):
	}
	for range 5 {
		w.gate <- struct{}{}
	}
	waitFor(t, func() bool { return w.String() == "DnrEF" }, w.String)
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waitBackground still waits after every background frame was written")
	}
	q.mu.Lock()
	queued, background := q.queued, q.background
	q.mu.Unlock()
	if queued != 0 || background != 0 {
		t.Errorf("queue counts %d bytes, %d of background, after all were written; want 0", queued, background)
	}
}

// bufConn is a connection that reads from a reader and writes into a buffer.
type bufConn struct {
	io.Reader
	out *bytes.Buffer
}

func (c bufConn) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c bufConn) Close() error                { return nil }

// TestNotificationFraming: a notification is framed with its params as
// they are, as jsonrpc2's framing would send it (the same JSON), and a
// publishDiagnostics goes as a background frame.
func TestNotificationFraming(t *testing.T) {
	for _, method := range []string{protocol.MethodTextDocumentPublishDiagnostics, protocol.MethodProgress, `odd "method" <&>`} {
		params := map[string]any{"uri": "file:///r/a <b>.log", "diagnostics": []any{map[string]any{"message": "x & y"}}}
		n, err := jsonrpc2.NewNotification(method, params)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		s := newStream(bufConn{Reader: strings.NewReader(""), out: &out}, zap.NewNop())
		if _, err := s.Write(context.Background(), n); err != nil {
			t.Fatal(err)
		}
		s.Close()
		body, err := readFrame(bufio.NewReader(&out))
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		var got, wantV any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%s: the frame's body is not JSON: %v: %s", method, err, body)
		}
		if err := json.Unmarshal(want, &wantV); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, wantV) {
			t.Errorf("%s: framed %s, want the JSON of %s", method, body, want)
		}
	}
	// The flag: a diagnostics frame waits behind a reply, a progress one not.
	w := &gatedWriter{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	s := &stream{queue: newSendQueue(w, maxQueuedBytes, zap.NewNop())}
	s.out = jsonrpc2.NewStream(writeOnly{&s.frame})
	defer s.queue.close(time.Second)
	send := func(method string) {
		n, err := jsonrpc2.NewNotification(method, map[string]string{"m": method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	send(protocol.MethodWindowLogMessage)
	<-w.entered
	send(protocol.MethodTextDocumentPublishDiagnostics)
	send(protocol.MethodProgress)
	for range 3 {
		w.gate <- struct{}{}
	}
	waitFor(t, func() bool { return strings.Count(w.String(), "Content-Length") == 3 }, w.String)
	logAt, progressAt, diagAt := strings.Index(w.String(), protocol.MethodWindowLogMessage), strings.Index(w.String(), protocol.MethodProgress), strings.Index(w.String(), protocol.MethodTextDocumentPublishDiagnostics)
	if !(logAt < progressAt && progressAt < diagAt) {
		t.Errorf("sent %q: want the log message, then the progress, then the diagnostics", w.String())
	}
}

// TestBackgroundWaitersAllWake: every producer waiting for the background
// frames to drain is woken (two publishings run at once after a settings
// change), and a closed queue tells them nothing more can be sent.
func TestBackgroundWaitersAllWake(t *testing.T) {
	w := &gatedWriter{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	q := newSendQueue(w, maxQueuedBytes, zap.NewNop())
	for _, b := range []string{"D", "E"} {
		if _, err := q.writeFrame([]byte(b), true); err != nil {
			t.Fatal(err)
		}
	}
	<-w.entered
	waited := make(chan error, 2)
	for range 2 {
		go func() { waited <- q.waitBackground(context.Background(), 1) }()
	}
	w.gate <- struct{}{} // D: one byte left queued, at the bound
	for range 2 {
		select {
		case err := <-waited:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a producer still waits with the background frames within its bound")
		}
	}
	w.gate <- struct{}{}
	waitFor(t, func() bool { return w.String() == "DE" }, w.String)
	q.close(time.Second)
	if err := q.waitBackground(context.Background(), 0); !errors.Is(err, errQueueClosed) {
		t.Errorf("waitBackground on a closed queue = %v, want errQueueClosed", err)
	}
}

// TestManyBackgroundFrames: a bulk change's diagnostics (a frame a file, of
// 20,000 files) queued behind a write in progress go out whole and in
// order, with a reply queued among them first; taking them is a step each
// (the queue once shifted its slice a frame at a time).
func TestManyBackgroundFrames(t *testing.T) {
	const n = 20000
	w := &gatedWriter{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	q := newSendQueue(w, maxQueuedBytes, zap.NewNop())
	defer q.close(time.Second)
	if _, err := q.writeFrame([]byte("<"), false); err != nil {
		t.Fatal(err)
	}
	<-w.entered
	var want strings.Builder
	want.WriteString("<r")
	for i := range n {
		b := fmt.Sprintf("%d,", i)
		want.WriteString(b)
		if _, err := q.writeFrame([]byte(b), true); err != nil {
			t.Fatal(err)
		}
		if i == n/2 {
			if direct, err := q.offer([]byte("r")); err != nil || direct {
				t.Fatalf("offer = %v, %v; want it queued", direct, err)
			}
		}
	}
	go func() {
		for range n + 2 {
			w.gate <- struct{}{}
		}
	}()
	waitFor(t, func() bool { return w.String() == want.String() }, func() string { return fmt.Sprintf("%d bytes", len(w.String())) })
}

// recordingConn is a connection whose writes are copied and kept with the
// slice written (kept alive, so that two allocations cannot share an
// address); it reads nothing.
type recordingConn struct {
	mu     sync.Mutex
	frames [][]byte // as written
	copies []string // their bytes when written
}

func (c *recordingConn) Read([]byte) (int, error) { select {} }
func (c *recordingConn) Close() error             { return nil }
func (c *recordingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frames = append(c.frames, p)
	c.copies = append(c.copies, string(p))
	return len(p), nil
}

// TestAppendedReplyBufferReused: answers written directly one after the
// other are made in one buffer, and each is written whole and right.
// Fails when each answer makes its own.
func TestAppendedReplyBufferReused(t *testing.T) {
	c := &recordingConn{}
	s := newStream(c, zap.NewNop())
	defer s.queue.close(time.Second)
	for i, r := range []string{"aaaa", "bbbb", "cccc"} {
		if _, written, err := s.writeResultAppended(jsonrpc2.NewNumberID(int32(i+1)), 16, appendedResult(r)); err != nil || !written {
			t.Fatalf("answer %d: written %v, %v", i+1, written, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, r := range []string{"aaaa", "bbbb", "cccc"} {
		if want := framed(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%q}`, i+1, r)); c.copies[i] != want {
			t.Errorf("frame %d: %q, want %q", i+1, c.copies[i], want)
		}
	}
	for i := 1; i < len(c.frames); i++ {
		if &c.frames[i][0] != &c.frames[0][0] {
			t.Errorf("answer %d was made in a buffer of its own", i+1)
		}
	}
}

// TestQueuedReplyBufferNotReused: an answer queued behind a write in
// progress keeps its bytes until it is sent, however many answers are
// made meanwhile: only a buffer written directly is made again. Fails when
// a queued answer's buffer is kept for the next one.
func TestQueuedReplyBufferNotReused(t *testing.T) {
	s, _, outR := pipedStream(t) // unbuffered: a write waits for the client's read
	dec := bufio.NewReader(outR)
	write := func(id int32, r string) error {
		if _, written, err := s.writeResultAppended(jsonrpc2.NewNumberID(id), 16, appendedResult(r)); err != nil || !written {
			return fmt.Errorf("answer %d: written %v, %v", id, written, err)
		}
		return nil
	}
	answer := func(id int32, r string) {
		t.Helper()
		if err := write(id, r); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(want string) {
		t.Helper()
		body, err := readFrame(dec)
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != want {
			t.Errorf("the client read %s, want %s", body, want)
		}
	}
	first := make(chan error, 1)
	go func() { first <- write(1, "aaaa") }() // written directly, its buffer kept
	expect(`{"jsonrpc":"2.0","id":1,"result":"aaaa"}`)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// A notification the queue's goroutine writes, held by the client.
	go func() {
		n, _ := jsonrpc2.NewNotification("window/logMessage", map[string]any{"type": 3, "message": "m"})
		_, _ = s.Write(context.Background(), n)
	}()
	waitFor(t, func() bool {
		s.queue.mu.Lock()
		defer s.queue.mu.Unlock()
		return s.queue.writing
	}, func() string { return "the queue never wrote the notification" })
	answer(2, "bbbb") // queued, in the kept buffer
	answer(3, "cccc") // queued
	answer(4, "dddd") // queued
	expect(`{"jsonrpc":"2.0","method":"window/logMessage","params":{"message":"m","type":3}}`)
	expect(`{"jsonrpc":"2.0","id":2,"result":"bbbb"}`)
	expect(`{"jsonrpc":"2.0","id":3,"result":"cccc"}`)
	expect(`{"jsonrpc":"2.0","id":4,"result":"dddd"}`)
}

// TestAppendedRepliesConcurrent: answers made and written by many
// goroutines at once, some directly and some queued, each of its own size,
// all reach the client whole and right (the kept buffer is one answer's
// at a time).
func TestAppendedRepliesConcurrent(t *testing.T) {
	s, _, outR := pipedStream(t)
	const writers, each = 8, 150
	want := func(id int) string { return strings.Repeat(string(rune('a'+(id-1)/each)), 1+(id*37)%3000) }
	var wg sync.WaitGroup
	failed := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := w*each + i + 1
				if _, written, err := s.writeResultAppended(jsonrpc2.NewNumberID(int32(id)), 16, appendedResult(want(id))); err != nil || !written {
					failed <- fmt.Errorf("answer %d: written %v, %w", id, written, err)
					return
				}
			}
		}()
	}
	dec := bufio.NewReader(outR)
	seen := map[int]bool{}
	for range writers * each {
		body, err := readFrame(dec)
		var m struct {
			ID     int    `json:"id"`
			Result string `json:"result"`
		}
		if err == nil {
			err = json.Unmarshal(body, &m)
		}
		if err != nil {
			t.Errorf("%.200q: %v", body, err)
			break
		}
		if w := want(m.ID); m.ID < 1 || m.ID > writers*each || seen[m.ID] || m.Result != w {
			t.Errorf("answer %d (seen before: %v): %d bytes of %.10q, want %d of %.10q", m.ID, seen[m.ID], len(m.Result), m.Result, len(w), w)
			break
		}
		seen[m.ID] = true
	}
	if t.Failed() {
		outR.Close() // the writers still at work end
	}
	wg.Wait()
	if !t.Failed() && len(failed) > 0 {
		t.Error(<-failed)
	}
}
