package records

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// lastAtOrBefore (RecordAt's search) finds what a binary search finds, for
// every line of tables spread evenly, clustered, with one far gap, of one
// or two records, and with an end that is no help (far past the last line).
func TestLastAtOrBeforeEqualsBinarySearch(t *testing.T) {
	plain := func(line []uint32, n uint32) int {
		i, found := slices.BinarySearch(line, n)
		if !found {
			i--
		}
		return i
	}
	r := rand.New(rand.NewPCG(1, 2))
	steps := map[string]func(i int) uint32{
		"even":      func(int) uint32 { return 3 },
		"one":       func(int) uint32 { return 1 },
		"random":    func(int) uint32 { return 1 + r.Uint32N(20) },
		"clustered": func(int) uint32 { return []uint32{1, 1, 1, 500}[r.IntN(4)] },
		"far gap": func(i int) uint32 {
			if i == 7 {
				return 100_000
			}
			return 1 + r.Uint32N(3)
		},
		"growing": func(i int) uint32 { return uint32(1 + i*i/50) },
	}
	for name, step := range steps {
		for _, k := range []int{1, 2, 3, 9, 64, 1000} {
			line := []uint32{r.Uint32N(10)}
			for i := 1; i < k; i++ {
				line = append(line, line[i-1]+step(i))
			}
			last := line[k-1]
			for _, end := range []uint32{last + 1, last + 1 + r.Uint32N(40), last + 1_000_000} {
				for n := line[0]; n < end && n <= last+50; n++ {
					if got, want := lastAtOrBefore(line, n, end), plain(line, n); got != want {
						t.Fatalf("%s, %d records, end %d: line %d: record %d, want %d", name, k, end, n, got, want)
					}
				}
			}
		}
	}
}

// Touch (the items' pass of hints) reads where lastAtOrBefore starts, in
// bounds for every line of tables of every shape (before the first record,
// past the last, an empty table), and RecordAt finds the same after it.
func TestTouchInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{0, 1, 2, 17, 500} {
		var tb Table
		first := r.Uint32N(20)
		for i := range k {
			tb.line = append(tb.line, first+uint32(i)*(1+r.Uint32N(5)))
			tb.sec = append(tb.sec, secNone)
			tb.ms = append(tb.ms, 0)
			tb.meta = append(tb.meta, uint8(i))
			tb.conv = append(tb.conv, 0)
		}
		tb.lines = first + uint32(k)*6 + 1
		for n := uint32(0); n < tb.lines+10; n++ {
			before := tb.RecordAt(n)
			tb.Touch(n)
			if got := tb.RecordAt(n); got != before {
				t.Fatalf("%d records: line %d: record %d after Touch, %d before", k, n, got, before)
			}
			if k > 0 && n >= tb.line[0] {
				if g := spreadGuess(tb.line, n, tb.lines); g < 0 || g >= k {
					t.Fatalf("%d records: line %d: guess %d", k, n, g)
				}
			}
		}
	}
}

// What a result's item reads of a table (RecordAt, Time, Meta: the
// columns' headers, the line count, the pending record's line) is in its
// first two cache lines, 128 bytes: a table's struct is met cold, once an
// item (issue 33: they were four lines).
func TestTableItemFieldsFirst(t *testing.T) {
	var tb Table
	for name, end := range map[string]uintptr{
		"line":      unsafe.Offsetof(tb.line) + unsafe.Sizeof(tb.line),
		"sec":       unsafe.Offsetof(tb.sec) + unsafe.Sizeof(tb.sec),
		"ms":        unsafe.Offsetof(tb.ms) + unsafe.Sizeof(tb.ms),
		"meta":      unsafe.Offsetof(tb.meta) + unsafe.Sizeof(tb.meta),
		"lines":     unsafe.Offsetof(tb.lines) + unsafe.Sizeof(tb.lines),
		"hasPend":   unsafe.Offsetof(tb.hasPend) + unsafe.Sizeof(tb.hasPend),
		"pend.line": unsafe.Offsetof(tb.pend) + unsafe.Offsetof(tb.pend.line) + unsafe.Sizeof(tb.pend.line),
	} {
		if end > 128 {
			t.Errorf("Table.%s ends at byte %d, want within the first 128", name, end)
		}
	}
}
