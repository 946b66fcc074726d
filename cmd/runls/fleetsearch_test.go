package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// TestFleetUnreachable: a fleet store that cannot be reached (its front
// down) is an error naming it, exit 2, for search and ship alike.
func TestFleetUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	for _, args := range [][]string{
		{"search", "--fleet", url, "deploy", "staging"},
		{"search", "deploy", "--fleet", url, "--run", "r1", "--episode", "episode-2", "--conversation", "conv-1"},
		{"ship", "../../testdata/sample-run", "--to", url, "--no-cache"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		if code != exitError || !strings.Contains(stderr.String(), "cannot be reached") || !strings.Contains(stderr.String(), url) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and the store named unreachable", args, code, stderr.String())
		}
	}
}

func TestFleetBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"ship", "../../testdata/sample-run"},
		{"ship", "--to", "http://127.0.0.1:1"},
		{"ship", "a", "b", "--run-id", "x", "--to", "http://127.0.0.1:1"},
		{"search", "--fleet", "ftp://x", "q"},
		{"search", "--fleet", "http://127.0.0.1:1"},
		{"search", "--fleet", "http://127.0.0.1:1", "--top-k", "0", "q"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != exitError {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr.String())
		}
	}
}
