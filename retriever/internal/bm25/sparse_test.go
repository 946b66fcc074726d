package bm25

import "testing"

// TestSparse: values set in increasing order, out of order and again are
// found; others are not.
func TestSparse(t *testing.T) {
	var c Sparse[string]
	for _, d := range []uint32{3, 9, 40, 7, 0, 9} {
		c.Set(d, string(rune('a'+d)))
	}
	c.Set(9, "again")
	want := map[uint32]string{0: "a", 3: "d", 7: "h", 9: "again", 40: string(rune('a' + 40))}
	for d := uint32(0); d < 50; d++ {
		got, ok := c.Get(d)
		if w, in := want[d]; ok != in || got != w {
			t.Errorf("Get(%d) = %q, %v; want %q, %v", d, got, ok, w, in)
		}
		if p := c.Ptr(d); (p != nil) != ok || (p != nil && *p != got) {
			t.Errorf("Ptr(%d) disagrees with Get", d)
		}
	}
	if c.Len() != len(want) {
		t.Errorf("Len %d, want %d", c.Len(), len(want))
	}
	last := -1
	c.Each(func(d uint32, _ string) {
		if int(d) <= last {
			t.Errorf("Each: %d after %d", d, last)
		}
		last = int(d)
	})
}
