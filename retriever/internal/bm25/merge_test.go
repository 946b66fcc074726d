package bm25

import "testing"

// TestMergeCandidates: small segments are merged once there are enough, but
// one that would be most of the merge waits, unless it is mostly dead.
func TestMergeCandidates(t *testing.T) {
	seg := func(docs, dead int) *Segment {
		return &Segment{key: make([]uint64, docs), ndead: dead}
	}
	tiny := func(n int) []*Segment {
		var ss []*Segment
		for range n {
			ss = append(ss, seg(10, 0))
		}
		return ss
	}
	big := seg(60000, 0)
	for _, tc := range []struct {
		name string
		segs []*Segment
		want int // segments merged
	}{
		{"too few", tiny(MergeSmallAt - 1), 0},
		{"enough", tiny(MergeSmallAt), MergeSmallAt},
		{"large ones are not small", append(tiny(MergeSmallAt-1), seg(smallSegmentDocs, 0)), 0},
		{"one small but big waits", append(tiny(MergeSmallAt), big), MergeSmallAt},
		{"and holds back too few others", append(tiny(MergeSmallAt-1), big), 0},
		{"a mostly dead one goes in", append(tiny(MergeSmallAt-1), seg(60000, 40000)), MergeSmallAt},
		{"a fair share of it", append(tiny(MergeSmallAt-1), seg(60000, 0), seg(15000, 0)), MergeSmallAt + 1},
	} {
		if got := len(MergeCandidates(tc.segs)); got != tc.want {
			t.Errorf("%s: %d segments merged, want %d", tc.name, got, tc.want)
		}
	}
}
