package persist

import (
	"slices"
	"testing"

	"runls/retriever/internal/records"
)

// keep is slices.Clone made in pieces after a prefault: the same values,
// memory of its own, len == cap, nil for nil, for sizes around its chunk
// and page boundaries and element sizes that do not divide them.
func TestKeepIsClone(t *testing.T) {
	for _, n := range []int{0, 1, 7, 4095, 4096, 4097, keepChunk - 1, keepChunk, keepChunk + 1, 3*keepChunk + 5} {
		checkKeep(t, n, func(i int) byte { return byte(i*7 + 1) })
		checkKeep(t, n, func(i int) uint32 { return uint32(i*2654435761 + 1) })
		checkKeep(t, n, func(i int) int64 { return int64(i) << 33 })
		checkKeep(t, n/3, func(i int) records.Span {
			return records.Span{First: uint32(i), Last: uint32(i + 1), Count: 3, LastUnits: 9}
		})
	}
	if keep[uint32](nil) != nil {
		t.Error("keep(nil) is not nil")
	}
}

func checkKeep[T comparable](t *testing.T, n int, val func(int) T) {
	t.Helper()
	src := make([]T, n, n+3)
	for i := range src {
		src[i] = val(i)
	}
	got := keep(src)
	if !slices.Equal(got, src) || len(got) != cap(got) || got == nil {
		t.Fatalf("keep of %d %T: not an equal clipped copy", n, src)
	}
	if n > 0 {
		var zero T
		got[0] = zero
		if src[0] != val(0) {
			t.Fatalf("keep of %d %T: shares its memory", n, src)
		}
	}
}

// prefault is only a hint: what b holds stays, aligned or not.
func TestPrefaultKeepsContent(t *testing.T) {
	b := make([]byte, 5*4096+17)
	for i := range b {
		b[i] = byte(i%251 + 1)
	}
	want := slices.Clone(b)
	for _, s := range [][]byte{b, b[1:], b[4095 : 3*4096+1], b[:10], b[:0]} {
		prefault(s)
	}
	if !slices.Equal(b, want) {
		t.Error("prefault changed the bytes")
	}
}
