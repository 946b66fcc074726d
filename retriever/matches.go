package retriever

import (
	"unicode"
	"unicode/utf8"

	"runls/recordformat"
	"runls/retriever/internal/bm25"
)

// setMatches sets the matches of each item (matchRanges) for the terms of
// text, the request's ranking text. The items' ranges share one array: a
// few allocations an answer as it grows, not one an item (issue 33).
func setMatches(items []Item, text string) {
	terms := map[string]bool{}
	for _, t := range bm25.Terms(text) {
		terms[t] = true
	}
	m := newTermMatcher(terms)
	var all [][2]int
	for i := range items {
		start := len(all)
		all = m.appendRanges(all, items[i].Text)
		items[i].Matches = all[start:len(all):len(all)]
		if len(all) == start {
			items[i].Matches = [][2]int{} // [] in the JSON, not null
		}
	}
}

// matchRanges returns the UTF-16 ranges [start, end) within text of every
// term of text (spec §6: a maximal run of letters and digits, lower-cased)
// that is in terms, in order: the run/search item's matches (spec §9), so
// that an editor can highlight the query's words. It cuts text into terms
// as bm25.Scanner does, so a range is a term the piece was indexed by.
func matchRanges(text string, terms map[string]bool) [][2]int {
	m := newTermMatcher(terms)
	return m.appendRanges([][2]int{}, text)
}

// termMatcher tells the terms of a set: a term whose length no term of the
// set has is not looked up (most of a line's terms).
type termMatcher struct {
	terms map[string]bool
	lens  uint64 // bit n: a term of n bytes (n < 64) is in terms
	long  bool   // a term of 64 bytes or more is
}

func newTermMatcher(terms map[string]bool) termMatcher {
	m := termMatcher{terms: terms}
	for t, in := range terms {
		switch {
		case !in:
		case len(t) < 64:
			m.lens |= 1 << len(t)
		default:
			m.long = true
		}
	}
	return m
}

func (m *termMatcher) has(term []byte) bool {
	if n := len(term); n < 64 && m.lens&(1<<n) == 0 || n >= 64 && !m.long {
		return false
	}
	return m.terms[string(term)]
}

// appendRanges appends the ranges of text's terms in the set to out
// (matchRanges). No closure ends a term: its captured variables lived in
// memory (2,993 instructions for a 68-byte line with one, 2,516 without:
// 44 against 37 a byte).
func (m *termMatcher) appendRanges(out [][2]int, text string) [][2]int {
	var small [64]byte
	term := small[:0]
	start, units := 0, 0 // the current term's first unit, and the units read
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if l := bm25.ASCIITerm(c); l != 0 {
				if len(term) == 0 {
					start = units
				}
				term = append(term, l)
			} else if len(term) > 0 {
				out = m.appendIfIn(out, term, start, units)
				term = term[:0]
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
		} else if len(term) > 0 {
			out = m.appendIfIn(out, term, start, units)
			term = term[:0]
		}
		units += recordformat.RuneUnits(r)
	}
	if len(term) > 0 {
		out = m.appendIfIn(out, term, start, units)
	}
	return out
}

// appendIfIn appends the range [start, end) of term to out when term is in
// the set.
func (m *termMatcher) appendIfIn(out [][2]int, term []byte, start, end int) [][2]int {
	if m.has(term) {
		out = append(out, [2]int{start, end})
	}
	return out
}
