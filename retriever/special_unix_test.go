//go:build unix

// This file makes the special files the tests of special files need (FIFOs,
// a device node), where the system has them (special_other_test.go).

package retriever

import (
	"syscall"
	"testing"
)

// mkfifo makes a FIFO at path.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	must(t, syscall.Mkfifo(path, 0o644))
}

// mkCharDevice makes /dev/null's device node at path (root only).
func mkCharDevice(path string) error {
	return syscall.Mknod(path, syscall.S_IFCHR|0o644, 1<<8|3)
}
