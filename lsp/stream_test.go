package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"go.lsp.dev/jsonrpc2"
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

// TestSendQueueBound: a client that stops reading while the server sends
// notifications (64 MiB of them, twice the bound) holds the queue, and the
// process's heap, within maxQueuedBytes plus one message; notifications are
// dropped past the bound, a reply is not; no request is read until the client
// reads again, and then everything goes on: the reply arrives, the request is
// read, and notifications are sent again.
func TestSendQueueBound(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := newStream(pipeConn{inR, outW}, zap.NewNop())
	defer func() {
		inW.Close()
		outR.Close()
		s.Close()
	}()
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
	read := make(chan jsonrpc2.Message, 1)
	go func() {
		msg, _, err := s.Read(context.Background())
		if err != nil {
			t.Errorf("Read: %v", err)
		}
		read <- msg
	}()
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
