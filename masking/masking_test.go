package masking

import (
	"strings"
	"sync"
	"testing"
)

func TestNoOp(t *testing.T) {
	spans, open := NoOp().Mask("password=hunter2 /etc/passwd")
	if spans != nil || open != -1 {
		t.Errorf("NoOp().Mask = %v, %d; want nil, -1", spans, open)
	}
}

func TestApplyAndMapping(t *testing.T) {
	text := "ab/etc/xyz cd SECRET ef"
	//       0123456789012345678901
	spans := []Span{{2, 10, "<path>"}, {14, 20, "<s>"}}
	masked, mp := Apply(text, spans)
	if want := "ab<path> cd <s> ef"; masked != want {
		t.Fatalf("Apply = %q, want %q", masked, want)
	}
	checkMapping(t, text, masked, spans, mp)
	for _, c := range []struct{ off, want int }{
		{0, 0}, {2, 2}, {5, 2}, {8, 10}, {9, 11}, {12, 14}, {13, 14}, {15, 20}, {18, 23},
	} {
		if got := mp.Original(c.off); got != c.want {
			t.Errorf("Original(%d) = %d, want %d", c.off, got, c.want)
		}
	}
	// A range whose end falls inside a placeholder covers the whole hidden span.
	if s, e := mp.OriginalRange(0, 5); s != 0 || e != 10 {
		t.Errorf("OriginalRange(0, 5) = %d, %d; want 0, 10", s, e)
	}
	if s, e := mp.OriginalRange(2, 8); s != 2 || e != 10 {
		t.Errorf("OriginalRange(2, 8) = %d, %d; want 2, 10", s, e)
	}
	if s, e := mp.OriginalRange(9, 11); s != 11 || e != 13 {
		t.Errorf("OriginalRange(9, 11) = %d, %d; want 11, 13", s, e)
	}
}

func TestApplyNoSpans(t *testing.T) {
	masked, mp := Apply("abc", nil)
	if masked != "abc" || mp.Original(2) != 2 || mp.Original(3) != 3 {
		t.Errorf("Apply without spans changed the text or its offsets")
	}
}

// TestApplyIgnoresBadSpans: a faulty masker must not crash the engine.
func TestApplyIgnoresBadSpans(t *testing.T) {
	text := "0123456789"
	masked, mp := Apply(text, []Span{{2, 4, "<a>"}, {3, 5, "<overlap>"}, {6, 5, "<reversed>"}, {8, 99, "<out>"}, {-1, 0, "<neg>"}})
	if masked != "01<a>456789" {
		t.Errorf("Apply = %q, want only the good span applied", masked)
	}
	checkMapping(t, text, masked, []Span{{2, 4, "<a>"}}, mp)
}

func TestApplyEmptyPlaceholder(t *testing.T) {
	text := "abcdef"
	spans := []Span{{1, 3, ""}}
	masked, mp := Apply(text, spans)
	if masked != "adef" {
		t.Fatalf("Apply = %q", masked)
	}
	checkMapping(t, text, masked, spans, mp)
}

// checkMapping checks what the engine relies on: the mapping is monotonic and
// within bounds, unmasked bytes map to themselves, and a placeholder's range
// maps to exactly what it hides.
func checkMapping(t testing.TB, text, masked string, spans []Span, mp Mapping) {
	t.Helper()
	prev := -1
	for off := 0; off <= len(masked); off++ {
		o := mp.Original(off)
		if o < 0 || o > len(text) {
			t.Fatalf("Original(%d) = %d, out of [0, %d]", off, o, len(text))
		}
		if o < prev {
			t.Fatalf("Original(%d) = %d < Original(%d) = %d: not monotonic", off, o, off-1, prev)
		}
		prev = o
	}
	if got := mp.Original(len(masked)); got != len(text) {
		t.Fatalf("Original(end of masked) = %d, want %d", got, len(text))
	}
	// Walk the masked text: placeholders map onto their spans, the rest byte for byte.
	m, o := 0, 0
	for _, s := range spans {
		for ; o < s.Start; m, o = m+1, o+1 {
			if mp.Original(m) != o || masked[m] != text[o] {
				t.Fatalf("masked[%d] = %q maps to %d (%q), want %d", m, masked[m], mp.Original(m), text[mp.Original(m):], o)
			}
		}
		pe := m + len(s.Placeholder)
		if masked[m:pe] != s.Placeholder {
			t.Fatalf("masked[%d:%d] = %q, want placeholder %q", m, pe, masked[m:pe], s.Placeholder)
		}
		// (An empty placeholder is an empty range, which cannot tell which side it is on.)
		if a, b := mp.OriginalRange(m, pe); pe > m && (a != s.Start || b != s.End) {
			t.Fatalf("OriginalRange(%d, %d) = %d, %d; want the hidden span %d, %d", m, pe, a, b, s.Start, s.End)
		}
		m, o = pe, s.End
	}
	if masked[m:] != text[o:] {
		t.Fatalf("masked tail %q != original tail %q", masked[m:], text[o:])
	}
}

// TestWordsAroundSecret: hiding a secret leaves every word around it as
// written, and at offsets that map back to where they are in the original.
func TestWordsAroundSecret(t *testing.T) {
	m := HidingOutside("/runs/r1")
	for _, text := range []string{
		"before " + ghp + " after",
		"Alice pushed with GITHUB_TOKEN=" + ghp + ", then deployed the release",
		"the key was " + awsID + ".\nNext line keeps its words",
		"connect postgres://app:hunter22@db:5432/main for reporting",
		"alpha\n" + pemBlock + "\nomega words here",
		"copied /home/bob/report.pdf into /runs/r1/episode-1/alice/report.pdf today",
	} {
		spans, _ := m.Mask(text)
		if len(spans) == 0 {
			t.Errorf("nothing hidden in %q", text)
			continue
		}
		masked, mp := Apply(text, spans)
		checkMapping(t, text, masked, spans, mp)
		// Every word of the original outside the spans is in the masked text, and maps back to itself.
		for _, w := range wordsOutside(text, spans) {
			k := strings.Index(masked, w.text)
			found := false
			for k >= 0 {
				if mp.Original(k) == w.start {
					found = true
					break
				}
				next := strings.Index(masked[k+1:], w.text)
				if next < 0 {
					break
				}
				k += 1 + next
			}
			if !found {
				t.Errorf("word %q at %d of %q is lost or moved in %q", w.text, w.start, text, masked)
			}
		}
	}
}

type word struct {
	text  string
	start int
}

// wordsOutside returns the space-separated words of text that no span touches.
func wordsOutside(text string, spans []Span) []word {
	var out []word
	for i := 0; i < len(text); {
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		j := i
		for j < len(text) && !isSpace(text[j]) {
			j++
		}
		if j > i {
			touched := false
			for _, s := range spans {
				touched = touched || s.Start < j && i < s.End
			}
			if !touched {
				out = append(out, word{text[i:j], i})
			}
		}
		i = j
	}
	return out
}

// TestPEMGrowing feeds a key block one line per write, as an agent writing a
// record would, and masks the whole record each time, as the engine does: no
// line of the key body is ever visible, and open says where to mask again
// until the END line arrives.
func TestPEMGrowing(t *testing.T) {
	m := HidingOutside("/runs/r1")
	lines := strings.Split("Alice pasted the deploy key:\n"+pemBlock+"\nand carried on.", "\n")
	body := strings.Split(pemBlock, "\n")
	var text string
	for i, line := range lines {
		if i > 0 {
			text += "\n"
		}
		text += line
		spans, open := m.Mask(text)
		masked, _ := Apply(text, spans)
		for _, b := range body {
			if strings.Contains(masked, b) {
				t.Fatalf("after line %d, masked text %q shows key line %q", i, masked, b)
			}
		}
		begun := strings.Contains(text, "-----BEGIN")
		ended := strings.Contains(text, "-----END")
		switch {
		case begun && !ended:
			if want := strings.Index(text, "-----BEGIN"); open != want {
				t.Fatalf("after line %d, open = %d, want %d (the block is not closed)", i, open, want)
			}
			if masked[len(masked)-len(SecretPlaceholder):] != SecretPlaceholder {
				t.Fatalf("after line %d, the open block is not hidden to the end: %q", i, masked)
			}
		case open != -1:
			t.Fatalf("after line %d, open = %d, want -1", i, open)
		}
	}
	if masked := maskString(m, text); masked != "Alice pasted the deploy key:\n<secret>\nand carried on." {
		t.Errorf("final masked text %q", masked)
	}
}

// TestIdempotent: masking masked text finds nothing new, on the examples of every rule.
func TestIdempotent(t *testing.T) {
	m := HidingOutside("/runs/r1")
	for _, cases := range ruleCases {
		for _, c := range cases {
			once := maskString(m, c.in)
			if spans, _ := m.Mask(once); len(spans) != 0 {
				t.Errorf("masking %q again (from %q) finds %v", once, c.in, spans)
			}
		}
	}
	// A placeholder next to text that a rule reads differently after hiding.
	for _, text := range []string{awsID + "/etc/passwd", "x" + awsID + "/y", "AKIA" + "/home/u" + strings.Repeat("Q", 12)} {
		once := maskString(m, text)
		if spans, _ := m.Mask(once); len(spans) != 0 {
			t.Errorf("masking %q again (from %q) finds %v", once, text, spans)
		}
	}
}

// TestConcurrent runs one masker from several goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	m := HidingOutside("/runs/r1")
	text := "Alice used " + ghp + " on /home/alice/x and password=hunter2\n" + pemBlock
	want := maskString(m, text)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 50; k++ {
				if got := maskString(m, text); got != want {
					t.Errorf("concurrent mask = %q, want %q", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
