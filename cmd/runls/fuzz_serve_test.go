package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
)

// fuzzRoot stands for the run folder in FuzzServeStdin's inputs. Each input
// has it replaced by the sample run's path padded with slashes to the same
// length, so the Content-Length headers written around it stay true.
const fuzzRoot = "/RUNLS_FUZZ_ROOT_________________________________________________________________________________________________________________"

// FuzzServeStdin feeds arbitrary bytes to `runls serve` as its whole stdin
// (in-process, through runServe, with the log at debug). Whatever the bytes,
// it exits 0 or 1, logs nothing at ERROR (a recovered panic is logged at
// ERROR, and is a finding here), and writes only well-framed JSON messages to
// stdout.
func FuzzServeStdin(f *testing.F) {
	frame := func(bodies ...string) []byte {
		var b bytes.Buffer
		for _, body := range bodies {
			fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
		}
		return b.Bytes()
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://` + fuzzRoot + `","capabilities":{}}}`
	initialized := `{"jsonrpc":"2.0","method":"initialized","params":{}}`
	search := `{"jsonrpc":"2.0","id":2,"method":"run/search","params":{"query":"hotel booking","topK":3}}`
	for _, seed := range [][]byte{
		frame(initialize, initialized, search,
			`{"jsonrpc":"2.0","id":3,"method":"workspace/symbol","params":{"query":"alice"}}`,
			`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}}`,
			`{"jsonrpc":"2.0","id":4,"method":"shutdown"}`, `{"jsonrpc":"2.0","method":"exit"}`),
		frame(initialize, initialized, `{"jsonrpc":"2.0","id":2,"method":"run/info","params":{}}`),
		append(frame(initialize), "Content-Length: 5\r\n\r\n{\"a\":Content-Length: 2\r\n\r\n{}"...),
		append(frame(initialize, initialized), "Content-Length: 999999999999\r\n\r\n"...),
		[]byte("Content-Length: -1\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}"),
		[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		[]byte("Content-Length: 4\r\n\r\nnull\r\n\r\ncontent-length:2\n\n[]"),
		frame(`{"jsonrpc":"2.0","id":1,"method":"run/search","params":{}}`),
		frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"file:///nonexistent/run","workspaceFolders":[{"uri":"file:///tmp/../x","name":"x"}]}}`, initialized, search),
		frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"initializationOptions":{"runls":{"topK":"x","masking":"on","interpreter":{"rules":[{"match":"(?P<text>","reading":"said"}]}}}}}`),
		frame("\xff\xfe\x00{", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"\xff\"}"),
		{},
	} {
		f.Add(seed)
	}
	root := copySample(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if pad := len(fuzzRoot) - len(root); pad >= 0 {
			data = bytes.ReplaceAll(data, []byte(fuzzRoot), []byte(root+strings.Repeat("/", pad)))
		}
		var stdout, stderr syncBuffer
		code := make(chan int, 1)
		go func() {
			code <- runServe(context.Background(), []string{"--log-level", "debug"}, bytes.NewReader(data), &stdout, &stderr)
		}()
		if got := waitCode(t, code); got != 0 && got != 1 {
			t.Errorf("exit code %d, want 0 or 1", got)
		}
		written := []byte(stdout.String())
		for line := range strings.SplitSeq(stderr.String(), "\n") {
			if strings.Contains(line, "\tERROR\t") {
				t.Errorf("logged an error: %s", line)
			}
		}
		if err := checkFramed(written); err != nil {
			t.Errorf("stdout is not a sequence of framed JSON messages: %v\n%q", err, written)
		}
	})
}

// checkFramed reads b as LSP messages: headers with a true Content-Length,
// then a JSON body.
func checkFramed(b []byte) error {
	r := bufio.NewReader(bytes.NewReader(b))
	for n := 0; ; n++ {
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err == io.EOF && line == "" && length < 0 {
				return nil
			}
			if err != nil {
				return fmt.Errorf("message %d: header: %w", n, err)
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				if length, err = strconv.Atoi(v); err != nil {
					return fmt.Errorf("message %d: %q", n, line)
				}
			}
		}
		if length < 0 {
			return fmt.Errorf("message %d has no Content-Length", n)
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			return fmt.Errorf("message %d: body: %w", n, err)
		}
		if !json.Valid(body) {
			return fmt.Errorf("message %d: body is not JSON: %q", n, body)
		}
	}
}
