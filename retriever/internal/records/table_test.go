package records

import (
	"math/rand/v2"
	"slices"
	"testing"
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
