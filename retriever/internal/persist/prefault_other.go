//go:build !linux

package persist

// prefault leaves b's pages to their faults where MADV_POPULATE_WRITE is
// not there (keep.go).
func prefault(b []byte) {}
