//go:build !unix

// This file stands in for links_unix_test.go: no link count is known.

package rungen

import "os"

func linkCount(os.FileInfo) (uint64, bool) { return 0, false }
