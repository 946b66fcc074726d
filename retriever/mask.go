package retriever

import (
	"strings"

	"runls/masking"
)

// Masking of text read back from a run's files (spec §8): whatever the
// index gives of a file's text, masked as the index masked it while it
// indexed it, when masking is on.

// maskText masks a text taken from a file, when masking is on.
func (rb *readBack) maskText(s string) string {
	if rb.masker == nil {
		return s
	}
	spans, _ := rb.masker.Mask(s)
	out, _ := masking.Apply(s, spans)
	return out
}

// maskLines masks lines as one text, so that a key block over several of
// them is hidden whole, and hides each line's part of a span in that line,
// when masking is on.
func (rb *readBack) maskLines(lines []string) []string {
	if rb.masker == nil {
		return lines
	}
	joined := strings.Join(lines, "\n")
	spans, _ := rb.masker.Mask(joined)
	if len(spans) == 0 {
		return lines
	}
	out := make([]string, len(lines))
	s := 0
	for i, l := range lines {
		e := s + len(l)
		out[i], _ = masking.Apply(l, lineSpans(spans, s, e))
		s = e + 1
	}
	return out
}
