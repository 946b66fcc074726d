// Package masking hides what evidence must never carry (local paths outside the
// run folder, credentials) before the engine indexes it, so that what is hidden
// is neither returned nor searchable.
//
// A Masker only finds spans; Apply rewrites a text and keeps the mapping from
// masked to original positions, so that piece ranges still point at the
// characters in the file as written.
package masking

// Span is a part of a text to hide: bytes [Start, End) are shown as Placeholder.
type Span struct {
	Start, End  int
	Placeholder string
}

// Masker finds what to hide in the evidence text of one record (its lines
// joined with "\n"), or of a stretch of a plain file.
type Masker interface {
	// Mask returns the spans to hide, sorted by Start and not overlapping.
	// open is the byte offset at which a block starts that is still open at the
	// end of text (a PEM key block whose END line is not there yet; it is
	// hidden to the end of text by one of the spans), or -1 when none is: the
	// engine masks the text again from open when more of it arrives.
	Mask(text string) (spans []Span, open int)
}

// NoOp returns the masker that hides nothing (the default: masking is off).
func NoOp() Masker { return noOp{} }

type noOp struct{}

func (noOp) Mask(string) ([]Span, int) { return nil, -1 }

// Mapping maps byte offsets of a masked text back to the original text.
type Mapping struct {
	// pairs of (masked offset, original offset) at each span boundary, ascending.
	marks []mark
}

type mark struct{ masked, original int }

// Apply rewrites text with spans (sorted, not overlapping, within text) and
// returns the masked text with its mapping to the original.
func Apply(text string, spans []Span) (string, Mapping) {
	if len(spans) == 0 {
		return text, Mapping{}
	}
	out := make([]byte, 0, len(text))
	var m Mapping
	prev := 0
	for _, s := range spans {
		out = append(out, text[prev:s.Start]...)
		m.marks = append(m.marks, mark{len(out), s.Start})
		out = append(out, s.Placeholder...)
		m.marks = append(m.marks, mark{len(out), s.End})
		prev = s.End
	}
	out = append(out, text[prev:]...)
	return string(out), m
}

// Original returns the offset in the original text of masked offset off. An
// offset inside a placeholder maps to the start of the span it hides, the end of
// a placeholder to the end of the span, so a range that covers a placeholder
// covers what it hides.
func (m Mapping) Original(off int) int {
	// marks come in (start, end) pairs per span.
	delta := 0
	for i := 0; i+1 < len(m.marks); i += 2 {
		start, end := m.marks[i], m.marks[i+1]
		if off < start.masked {
			break
		}
		if off < end.masked {
			return start.original
		}
		delta = end.original - end.masked
	}
	return off + delta
}
