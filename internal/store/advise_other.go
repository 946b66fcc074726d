//go:build !linux

// This file stands in for the read advice of advise_linux.go where the
// kernel's readahead of mapped faults is not known to read beyond what is
// used: nothing is advised.

package store

func adviseRandom([]byte) {}

func adviseWillNeed([]byte, int, int) {}

func adviseSequential(_ []byte, _, _ int, pass func()) { pass() }
