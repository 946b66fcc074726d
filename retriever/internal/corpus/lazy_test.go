package corpus

import (
	"testing"
	"unsafe"

	"runls/retriever/internal/bm25"
)

// addrBacking checks bytes by their address: a check that reaches one of
// bad panics with badAddr; Corrupt panics with its error.
type addrBacking struct{ bad [][2]uintptr }

type badAddr struct{}

func (k *addrBacking) Check(p []byte) {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	for _, r := range k.bad {
		if lo < r[1] && r[0] < lo+uintptr(len(p)) {
			panic(badAddr{})
		}
	}
}
func (k *addrBacking) CheckAll()         {}
func (k *addrBacking) Corrupt(err error) { panic(err) }

func addrOf[T any](v []T, i int) [2]uintptr {
	p := uintptr(unsafe.Pointer(&v[i]))
	return [2]uintptr{p, p + unsafe.Sizeof(v[i])}
}

func recovered(fn func()) (r any) {
	defer func() { r = recover() }()
	fn()
	return nil
}

// Columns read back lazily check each piece's values at their first use,
// in every accessor a search, a filter or an answer reads them through,
// and take a value that indexes nothing for the backing's corruption.
func TestColumnsCheckedAtUse(t *testing.T) {
	var raw RawColumns
	for d := range uint32(300) {
		raw.Add(Piece{Line: d * 2, Start: d, Blen: 5, Conv: d % 3, Flags: uint8(d % 2)})
	}
	const d = 200
	for _, tc := range []struct {
		name string
		bad  func(s *Columns) [2]uintptr
		read func(s *Columns, d uint32)
	}{
		{"line step", func(s *Columns) [2]uintptr { return addrOf(s.LineStep, d) }, func(s *Columns, d uint32) { s.LineOf(d) }},
		{"line base", func(s *Columns) [2]uintptr { return addrOf(s.LineBase, d/LineGroup) }, func(s *Columns, d uint32) { s.LineOf(d) }},
		{"start", func(s *Columns) [2]uintptr { return addrOf(s.Start16, d) }, func(s *Columns, d uint32) { s.StartOf(d) }},
		{"length", func(s *Columns) [2]uintptr { return addrOf(s.Blen16, d) }, func(s *Columns, d uint32) { s.BlenOf(d) }},
		{"conversation", func(s *Columns) [2]uintptr { return addrOf(s.Conv16, d) }, func(s *Columns, d uint32) { s.ConvOf(d) }},
		{"flags", func(s *Columns) [2]uintptr { return addrOf(s.Flags, d) }, func(s *Columns, d uint32) { s.FlagsOf(d) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Columns
			s.Narrow(&raw)
			s.SetBacking(&addrBacking{bad: [][2]uintptr{tc.bad(&s)}}, 3)
			if r := recovered(func() { tc.read(&s, 0) }); r != nil {
				t.Fatalf("piece 0 panicked: %v", r)
			}
			if r := recovered(func() { tc.read(&s, d) }); r != (badAddr{}) {
				t.Fatalf("piece %d: panicked with %v, want the backing's", d, r)
			}
		})
	}
	var s Columns
	s.Narrow(&raw)
	s.SetBacking(&addrBacking{}, 3)
	s.Conv16 = append([]uint16(nil), s.Conv16...)
	s.Conv16[d] = uint16(len(s.ConvIDs)) // as a flipped byte would make it
	s.LineStep = append([]uint8(nil), s.LineStep...)
	s.LineStep[d] = FarMark // with no far line
	for name, read := range map[string]func(){"conversation": func() { s.ConvOf(d) }, "far line": func() { s.LineOf(d) }} {
		if err, ok := recovered(read).(error); !ok {
			t.Errorf("%s: panicked with %v, want the backing's Corrupt", name, err)
		}
	}
}

var _ bm25.Backing = (*addrBacking)(nil)
