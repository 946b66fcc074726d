package bm25

import (
	"math/rand/v2"
	"testing"
)

// oddRejects rejects the groups of odd number whole and accepts the others.
type oddRejects struct{}

func (oddRejects) Group(_ int, g uint32) Verdict {
	if g%2 == 1 {
		return RejectAll
	}
	return AcceptAll
}
func (oddRejects) Check(int, uint32, uint32) bool  { return true }
func (oddRejects) Accept(int, uint32, uint32) bool { return true }

// TestDocCursorRunOf: a cursor asked documents in increasing order, with
// gaps of one document to thousands and rejectsThrough's skips between,
// finds each document's group and run as a binary search of all the runs
// does (Segment.Group), on segments of one run to thousands; so does a
// runCursor (Accept's callers), asked the same documents.
func TestDocCursorRunOf(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, runs := range []int{1, 2, 3, 17, 1000, 5000} {
		s := &Segment{}
		d := uint32(0)
		for i := range runs {
			s.groups = append(s.groups, groupRun{lo: d, group: uint32(i)})
			d += 1 + uint32(r.IntN(1+r.IntN(300)))
		}
		docs := d
		for trial := range 20 {
			c := newDocCursor(oddRejects{}, segRef{s, 0})
			rc := runCursor{groups: s.groups}
			x := uint32(r.IntN(3))
			for x < docs {
				if trial%2 == 1 && r.IntN(8) == 0 {
					// It may leave the cursor past x's run (a pre-filter):
					// the next document asked is at the run it left.
					c.rejectsThrough(x, x+uint32(r.IntN(500)))
					x = max(x, s.groups[c.i].lo)
				}
				if got, want := c.groupAt(x), s.Group(x); got != want {
					t.Fatalf("%d runs, trial %d: groupAt(%d) = %d, want %d", runs, trial, x, got, want)
				}
				if got, want := rc.groupAt(x), s.Group(x); got != want {
					t.Fatalf("%d runs, trial %d: runCursor.groupAt(%d) = %d, want %d", runs, trial, x, got, want)
				}
				if s.groups[c.i].lo > x || (c.i+1 < len(s.groups) && s.groups[c.i+1].lo <= x) {
					t.Fatalf("%d runs: document %d in run %d from %d", runs, x, c.i, s.groups[c.i].lo)
				}
				switch r.IntN(4) {
				case 0:
					x++
				case 1:
					x += uint32(r.IntN(20))
				case 2:
					x += uint32(r.IntN(2000))
				default:
					x += uint32(r.IntN(200000))
				}
			}
		}
	}
}
