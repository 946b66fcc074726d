//go:build unix

// This file holds how a test's child process runs as the user nobody
// (runAsNobody, follow_test.go).

package retriever

import "syscall"

func nobodyAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}
