package records

import "slices"

// Reading a page back is the retriever's; where to read is planned here:
// each file's records of the page in stretches of lines (one read each),
// records close together in one stretch.

// spanGapLines is how many lines apart two records of a page may be and
// still be read in one stretch: reading a few KiB more costs less than
// another read.
const spanGapLines = 64

// Stretch is lines [From, To) of files[File], read in one go: they start
// with record First of its table, and hold Picks (indexes into the page's
// picks, by record).
type Stretch struct {
	File     int
	From, To uint32
	First    int
	Picks    []int
}

// Stretches plans the reads of a page's picks, by file, then line.
func Stretches(files []File, picks []Pick) []Stretch {
	byFile := make([][]int, len(files)) // the picks of each file
	for i, p := range picks {
		byFile[p.File] = append(byFile[p.File], i)
	}
	var out []Stretch
	for f, idx := range byFile {
		if len(idx) == 0 {
			continue
		}
		t := files[f].Table
		slices.SortFunc(idx, func(a, b int) int { return picks[a].Rec - picks[b].Rec })
		for lo := 0; lo < len(idx); {
			hi := lo + 1
			for hi < len(idx) && t.Line(picks[idx[hi]].Rec) <= t.Last(picks[idx[hi-1]].Rec)+spanGapLines {
				hi++
			}
			first, last := picks[idx[lo]].Rec, picks[idx[hi-1]].Rec
			out = append(out, Stretch{File: f, From: t.Line(first), To: t.Last(last) + 1, First: first, Picks: idx[lo:hi]})
			lo = hi
		}
	}
	return out
}
