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

// Touch (the items' pass of hints) gives a piece's line where its step fits
// a byte, the base and the far mark where it does not, and touches nothing
// for a piece out of the columns, or of columns a piece has none of.
func TestTouch(t *testing.T) {
	raw := RawColumns{}
	for d := range uint32(200) {
		line := d
		if d == 70 {
			line = 1 << 20 // far from its group's base
		}
		raw.Add(Piece{Line: line, Start: d % 7, Blen: 3, Conv: d % 3, Flags: uint8(d % 4)})
	}
	raw.Add(Piece{Line: 300, Start: 70000, Blen: 3}) // wide
	var s Columns
	s.Narrow(&raw)
	for d := range uint32(len(raw.Line)) {
		line, _ := s.Touch(d)
		switch want := s.LineOf(d); {
		case d == 70:
			if line != s.LineBase[d/LineGroup]+FarMark {
				t.Errorf("piece %d (far): line %d, want its base and the mark", d, line)
			}
		case line != want:
			t.Errorf("piece %d: line %d, want %d", d, line, want)
		}
	}
	for _, d := range []uint32{uint32(len(raw.Line)), 1 << 30, ^uint32(0)} {
		if line, rest := s.Touch(d); line != 0 || rest != 0 {
			t.Errorf("piece %d, out of the columns: %d, %d", d, line, rest)
		}
	}
	if line, rest := (&Columns{}).Touch(0); line != 0 || rest != 0 {
		t.Errorf("empty columns: %d, %d", line, rest)
	}
}
