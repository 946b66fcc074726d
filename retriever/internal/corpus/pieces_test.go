package corpus

import "testing"

// TestNarrowLines checks the line column against the lines it was given,
// across groups that span files (lines start again at 0), lines far apart
// in one group, and a last group that is not full.
func TestNarrowLines(t *testing.T) {
	var lines []uint32
	for l := range uint32(100) { // file A: 100 lines
		lines = append(lines, l)
	}
	for l := range uint32(40) { // file B, far down in its file
		lines = append(lines, 70000+l*3)
	}
	for l := range uint32(30) { // file C from 0: in the same group as B
		lines = append(lines, l)
	}
	lines = append(lines, 255, 256, 511, 1<<31, 7) // steps around a byte's reach
	var s Columns
	s.narrowLines(lines)
	for d, want := range lines {
		if got := s.LineOf(uint32(d)); got != want {
			t.Fatalf("piece %d: line %d, want %d", d, got, want)
		}
	}
	if len(s.FarLines) == 0 {
		t.Fatal("no far lines: the test means some")
	}
}
