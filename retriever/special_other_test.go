//go:build !unix

// This file stands in for special_unix_test.go: no FIFOs, no device nodes;
// a test that needs a FIFO is skipped.

package retriever

import (
	"errors"
	"testing"
)

func mkfifo(t *testing.T, path string) {
	t.Helper()
	t.Skip("no FIFOs on this system")
}

func mkCharDevice(path string) error { return errors.New("no device nodes on this system") }
