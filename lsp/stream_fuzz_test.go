package lsp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"go.uber.org/zap"
)

// inOut is a connection reading from a fixed input and writing anywhere.
type inOut struct {
	io.Reader
	out bytes.Buffer
}

func (c *inOut) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c *inOut) Close() error                { return nil }

// FuzzStreamRead: whatever the bytes, Read returns messages or an error,
// never panics, and reaches the end of its input.
func FuzzStreamRead(f *testing.F) {
	for _, seed := range []string{
		"Content-Length: 46\r\n\r\n" + `{"jsonrpc":"2.0","id":1,"method":"run/info"}` + "\n",
		"Content-Length: 10\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}",
		"Content-Length: 90\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"y\"}",
		"Content-Length: abc\r\n\r\nhello",
		"garbage\r\nContent-Type: x\r\n\r\n",
		"Content-Length: 3\r\n\r\nCon",
		"Content-Length: 2\r\n\r\n[]",
		"content-length: 2\r\n\r\n{}",
		"\r\n\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		conn := &inOut{Reader: bytes.NewReader(data)}
		s := newStream(conn, zap.NewNop())
		defer s.Close()
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("more messages (%d) than bytes (%d)", i, len(data))
			}
			msg, _, err := s.Read(context.Background())
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("Read ended with %v, want the end of the input", err)
				}
				return
			}
			if msg == nil {
				t.Fatal("Read returned neither a message nor an error")
			}
		}
	})
}
