package masking

import "slices"

// keywordSet finds every occurrence of a set of keywords in a text, ASCII
// case-insensitively, in one pass: an Aho-Corasick automaton laid out as a
// dense table over byte classes. Each byte of text costs one table look-up;
// states are numbered premultiplied by the row length, and those where a
// keyword ends come last, so the loop neither multiplies nor reads a second
// table to know that nothing was found.
//
// It is the pre-filter of the vendor rules: a rule's regular expression runs
// only at or near an occurrence of one of its keywords.
type keywordSet struct {
	class  [256]uint8 // byte -> class; 0: a byte in no keyword
	stride uint16     // classes per state
	// next[state+class] is the state after that byte (premultiplied): a
	// whole uint16 range, so that the scan's index needs no bounds check.
	next *[1 << 16]uint16
	// firstEnd is the first state (premultiplied) where a keyword ends;
	// ends[(state-firstEnd)/stride] lists the keywords that end there (its
	// own and, through its suffix links, the shorter ones that end there too),
	// as indexes into the keywords given to newKeywordSet.
	firstEnd uint16
	ends     [][]uint16
	lens     []int32 // each keyword's length
}

// newKeywordSet builds the automaton of keywords (matched ASCII case-insensitively).
func newKeywordSet(keywords []string) *keywordSet {
	k := &keywordSet{}
	nclass := 1
	for _, kw := range keywords {
		for i := 0; i < len(kw); i++ {
			c := lowerASCII(kw[i])
			if k.class[c] == 0 {
				k.class[c] = uint8(nclass)
				if isASCIILetter(c) {
					k.class[c^0x20] = uint8(nclass)
				}
				nclass++
			}
		}
	}
	if nclass > 256 {
		panic("masking: more keyword byte classes than fit a byte") // every class is a distinct byte
	}
	// The trie, with 0 meaning "no edge" (the root is state 0 and is never a child).
	trie := [][]int{make([]int, nclass)}
	ends := [][]uint16{nil}
	for id, kw := range keywords {
		s := 0
		for i := 0; i < len(kw); i++ {
			c := k.class[kw[i]]
			if trie[s][c] == 0 {
				trie = append(trie, make([]int, nclass))
				ends = append(ends, nil)
				trie[s][c] = len(trie) - 1
			}
			s = trie[s][c]
		}
		if len(kw) > 0 && !slices.Contains(ends[s], uint16(id)) {
			ends[s] = append(ends[s], uint16(id))
		}
		k.lens = append(k.lens, int32(len(kw)))
	}
	// Breadth first: each state's failure link, its missing edges filled from
	// the failure state's, and its ends joined with the failure state's.
	fail := make([]int, len(trie))
	queue := make([]int, 0, len(trie))
	for c := 1; c < nclass; c++ {
		if t := trie[0][c]; t != 0 {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if f := fail[s]; len(ends[f]) > 0 {
			ends[s] = append(ends[s], ends[f]...)
		}
		for c := 1; c < nclass; c++ {
			t := trie[s][c]
			if t == 0 {
				trie[s][c] = trie[fail[s]][c]
				continue
			}
			fail[t] = trie[fail[s]][c]
			queue = append(queue, t)
		}
	}
	if len(trie)*nclass > 1<<16 {
		// States are premultiplied uint16: some 1,500 states of 40 classes fit.
		panic("masking: keywords need more automaton states than fit uint16")
	}
	// Renumber: states without ends first (the root stays 0), then the others.
	order := make([]int, len(trie)) // new number of each state
	n := 0
	for pass := 0; pass < 2; pass++ {
		for s := range trie {
			if (len(ends[s]) > 0) == (pass == 1) {
				if pass == 1 && k.firstEnd == 0 && k.ends == nil {
					k.firstEnd = uint16(n * nclass)
				}
				order[s] = n
				n++
				if pass == 1 {
					k.ends = append(k.ends, ends[s])
				}
			}
		}
	}
	if k.ends == nil {
		k.firstEnd = uint16(n * nclass) // no keyword: no state ends one
	}
	k.stride = uint16(nclass)
	k.next = new([1 << 16]uint16)
	for s, row := range trie {
		base := order[s] * nclass
		for c, t := range row {
			k.next[base+c] = uint16(order[t] * nclass)
		}
	}
	return k
}

// occurrence is a keyword found at text[start:end].
type occurrence struct {
	keyword    uint16
	start, end int32
}

// find appends the occurrences of the keywords in text to out, in order of their end.
func (k *keywordSet) find(text string, out []occurrence) []occurrence {
	var s uint16
	next, class, firstEnd := k.next, &k.class, k.firstEnd
	for i := 0; i < len(text); i++ {
		s = next[s+uint16(class[text[i]])]
		if s >= firstEnd {
			for _, id := range k.ends[(s-firstEnd)/k.stride] {
				out = append(out, occurrence{keyword: id, start: int32(i+1) - k.lens[id], end: int32(i + 1)})
			}
		}
	}
	return out
}

func lowerASCII(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b | 0x20
	}
	return b
}
