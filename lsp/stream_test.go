package lsp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

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
