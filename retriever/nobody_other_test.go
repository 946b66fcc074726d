//go:build !unix

// This file stands in for nobody_unix_test.go: no user to run as.

package retriever

import "syscall"

func nobodyAttr() *syscall.SysProcAttr { return nil }
