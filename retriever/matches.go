package retriever

import (
	"unicode"
	"unicode/utf8"

	"runls/recordformat"
	"runls/retriever/internal/bm25"
)

// matchRanges returns the UTF-16 ranges [start, end) within text of every
// term of text (spec §6: a maximal run of letters and digits, lower-cased)
// that is in terms, in order: the run/search item's matches (spec §9), so
// that an editor can highlight the query's words. It cuts text into terms
// as bm25.Scanner does, so a range is a term the piece was indexed by.
func matchRanges(text string, terms map[string]bool) [][2]int {
	out := [][2]int{}
	var term []byte
	start, units := 0, 0 // the current term's first unit, and the units read
	end := func() {
		if len(term) > 0 && terms[string(term)] {
			out = append(out, [2]int{start, units})
		}
		term = term[:0]
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if l := bm25.ASCIITerm(c); l != 0 {
				if len(term) == 0 {
					start = units
				}
				term = append(term, l)
			} else {
				end()
			}
			i++
			units++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if len(term) == 0 {
				start = units
			}
			term = utf8.AppendRune(term, unicode.ToLower(r))
		} else {
			end()
		}
		units += recordformat.RuneUnits(r)
	}
	end()
	return out
}
