package masking

import "strings"

// CredentialMasker hides credentials behind SecretPlaceholder, by the rules of
// ruleTable. It is safe for concurrent use.
//
// Speed comes from the pre-filter: each rule keyword is watched for at one of
// its rarest bytes, so a text is read once, byte by byte, through a table; only
// where a keyword occurs does its rule's regular expression run, once, anchored
// where the match must start (the keyword, or the start of its word) and on a
// short window of the rest of that line; a block rule (PEM) then looks for its
// end line with a literal search. Ordinary text costs about one table look-up
// per byte.
type CredentialMasker struct {
	rules []rule
	// hot[b]: some keyword is watched for at byte b (the fast test of the scan);
	// hotOrPath adds the bytes at which a path may start, for HidingOutside's
	// single pass.
	hot, hotOrPath [256]bool
	// next[b] is the set of bytes that may follow a hot byte b in a keyword
	// (the second test), unless anyNext[b]: a keyword ends at b.
	next    [256][4]uint64
	anyNext [256]bool
	// prev[b] likewise is the set of bytes that may come before b (the third
	// test), unless anyPrev[b]: a keyword starts at b.
	prev    [256][4]uint64
	anyPrev [256]bool
	// triggers[b] lists the keywords watched for at byte b.
	triggers [256][]trigger
}

// trigger is a keyword watched for at one of its bytes.
type trigger struct {
	rule int    // index in rules
	kw   string // the keyword (lower case when fold)
	off  int    // offset of the watched byte in kw
	fold bool
}

// NewCredentialMasker returns the masker of the built-in credential rules.
func NewCredentialMasker() *CredentialMasker {
	return newCredentialMasker(compiledRules)
}

func newCredentialMasker(rules []rule) *CredentialMasker {
	m := &CredentialMasker{rules: rules}
	for b, ok := range pathTrigger {
		m.hotOrPath[b] = ok
	}
	for ri, r := range rules {
		for _, kw := range r.keywords {
			if r.fold {
				kw = strings.ToLower(kw)
			}
			off := rarestByte(kw)
			t := trigger{rule: ri, kw: kw, off: off, fold: r.fold}
			b := kw[off]
			m.watch(b, t)
			if r.fold && isASCIILetter(b) {
				m.watch(b^0x20, t)
			}
		}
	}
	return m
}

// watch adds the trigger t at byte b.
func (m *CredentialMasker) watch(b byte, t trigger) {
	m.triggers[b] = append(m.triggers[b], t)
	m.hot[b] = true
	m.hotOrPath[b] = true
	if t.off+1 < len(t.kw) {
		addByte(&m.next[b], t.kw[t.off+1], t.fold)
	} else {
		m.anyNext[b] = true
	}
	if t.off > 0 {
		addByte(&m.prev[b], t.kw[t.off-1], t.fold)
	} else {
		m.anyPrev[b] = true
	}
}

func addByte(set *[4]uint64, c byte, fold bool) {
	set[c>>6] |= 1 << (c & 63)
	if fold && isASCIILetter(c) {
		c ^= 0x20
		set[c>>6] |= 1 << (c & 63)
	}
}

func inSet(set *[4]uint64, c byte) bool { return set[c>>6]&(1<<(c&63)) != 0 }

// Mask returns the spans of the credentials in text, and the start of a PEM
// block that is not closed by the end of text (or -1).
func (m *CredentialMasker) Mask(text string) ([]Span, int) {
	return stabilise(text, m.find)
}

// maxRules bounds the rule table so that find keeps its per-rule state on the stack.
const maxRules = 32

func (m *CredentialMasker) find(text string, out []Span) ([]Span, int) {
	return m.scan(text, out, nil)
}

// scan finds the credentials in text and, when paths is not nil, the paths it
// hides too, in one pass.
func (m *CredentialMasker) scan(text string, out []Span, paths *PathRedactor) ([]Span, int) {
	open := -1
	hot := &m.hot
	if paths != nil {
		hot = &m.hotOrPath
	}
	pathsTo := 0 // the end of the last path found: no path starts inside it
	// scanned[r] is where rule r's last attempt ended: a keyword found before
	// it was part of that attempt (or of its match).
	var scanned [maxRules]int32 // small: it is zeroed on every call, and records are short
	keyAt, keyFrom, keyTo, parts := -1, 0, 0, keyParts(0)
	for i := 0; i < len(text); i++ {
		b := text[i]
		if !hot[b] {
			continue
		}
		if paths != nil && pathTrigger[b] && i >= pathsTo {
			if start, end, ok := paths.pathAt(text, i); ok {
				out = append(out, Span{Start: start, End: end, Placeholder: PathPlaceholder})
				pathsTo = end
			}
		}
		if !m.hot[b] || !m.anyNext[b] && (i+1 >= len(text) || !inSet(&m.next[b], text[i+1])) ||
			!m.anyPrev[b] && (i == 0 || !inSet(&m.prev[b], text[i-1])) {
			continue
		}
		for _, t := range m.triggers[b] {
			s := i - t.off
			if s < int(scanned[t.rule]) || s < 0 || s+len(t.kw) > len(text) || !hasKeyword(text[s:], t.kw, t.fold) {
				continue
			}
			r := &m.rules[t.rule]
			start := s
			switch {
			case r.keyBefore:
				if s != keyAt {
					// The operator rules share the key: read it once per operator.
					keyAt, keyTo = s, keyEnd(text, s)
					keyFrom = wordStart(text, keyTo)
					parts = partsOf(text[keyFrom:keyTo])
				}
				start = keyFrom
				if start == keyTo || r.keyCheck != nil && !r.keyCheck(text[start:keyTo], parts) {
					continue
				}
			case r.wordStart:
				start = wordStart(text, s)
			}
			if start < int(scanned[t.rule]) || r.boundary && start > 0 && isWordByte(text[start-1]) ||
				r.near != nil && !r.near(text, s) {
				scanned[t.rule] = int32(max(int(scanned[t.rule]), s+1))
				continue
			}
			var end, o int
			out, end, o = r.apply(text, start, out)
			scanned[t.rule] = int32(max(end, s+1))
			if o >= 0 && (open < 0 || o < open) {
				open = o
			}
		}
	}
	return out, open
}

// apply tries the rule at start and appends the span it hides, if any. It
// returns where the match ended (start when there was none) and the start of
// an unclosed block (or -1).
func (r *rule) apply(text string, start int, out []Span) ([]Span, int, int) {
	we := min(len(text), start+r.maxLen)
	if k := strings.IndexByte(text[start:we], '\n'); k >= 0 {
		we = start + k
	}
	mt := r.re.FindStringSubmatchIndex(text[start:we])
	if mt == nil {
		return out, start, -1
	}
	if r.blockEnd != nil {
		end, closed := r.findBlockEnd(text, start+mt[1])
		open := -1
		if !closed {
			open = start
		}
		return append(out, Span{Start: start, End: end, Placeholder: SecretPlaceholder}), end, open
	}
	matchEnd := start + mt[1]
	from, to := mt[0], mt[1]
	if len(r.hide) > 0 {
		from = -1
		for _, g := range r.hide {
			if mt[2*g] >= 0 {
				from, to = mt[2*g], mt[2*g+1]
				break
			}
		}
		if from < 0 {
			return out, matchEnd, -1
		}
	}
	if r.accept != nil {
		sub := make([]string, len(mt)/2)
		for g := range sub {
			if mt[2*g] >= 0 {
				sub[g] = text[start+mt[2*g] : start+mt[2*g+1]]
			}
		}
		if !r.accept(sub) {
			return out, matchEnd, -1
		}
	}
	if to <= from {
		return out, matchEnd, -1
	}
	from, to = start+from, start+to
	if to == we {
		// The window may have cut the match: hide the rest of the token too.
		for to < len(text) && !tokenStop[text[to]] {
			to++
		}
		matchEnd = max(matchEnd, to)
	}
	return append(out, Span{Start: from, End: to, Placeholder: SecretPlaceholder}), matchEnd, -1
}

// tokenStop ends a token that a window cut: white space, quotes, brackets.
var tokenStop = func() (s [256]bool) {
	for _, b := range []byte(" \t\n\r\v\f\"'`<>()[]{},;") {
		s[b] = true
	}
	return s
}()

// findBlockEnd returns the end of the first blockEnd match at or after from,
// and true; or the end of text and false when the block is not closed yet.
func (r *rule) findBlockEnd(text string, from int) (int, bool) {
	for from < len(text) {
		k := strings.Index(text[from:], r.blockEndKeyword)
		if k < 0 {
			break
		}
		at := from + k
		if mt := r.blockEnd.FindStringIndex(text[at:min(len(text), at+r.maxLen)]); mt != nil {
			return at + mt[1], true
		}
		from = at + len(r.blockEndKeyword)
	}
	return len(text), false
}

// wordStart returns where the word that holds byte s starts: it goes back over
// letters, digits, "_", "." and "-", at most 256 bytes.
func wordStart(text string, s int) int {
	lo := max(0, s-256)
	for s > lo && isKeyByte(text[s-1]) {
		s--
	}
	return s
}

// keyEnd returns where the key before the assignment operator at op ends: it
// goes back over blanks and a closing quote (escaped or not: JSON in a string).
func keyEnd(text string, op int) int {
	k := op
	for k > 0 && (text[k-1] == ' ' || text[k-1] == '\t') {
		k--
	}
	if k > 0 && (text[k-1] == '"' || text[k-1] == '\'') {
		k--
		if k > 0 && text[k-1] == '\\' {
			k--
		}
	}
	return k
}

func isKeyByte(b byte) bool { return isWordByte(b) || b == '.' || b == '-' }

func isWordByte(b byte) bool { return isAlnum(b) || b == '_' }

// hasKeyword reports whether text starts with kw (kw in lower case when fold).
func hasKeyword(text, kw string, fold bool) bool {
	if len(text) < len(kw) {
		return false
	}
	if !fold {
		return text[:len(kw)] == kw
	}
	for j := 0; j < len(kw); j++ {
		b := text[j]
		if b >= 'A' && b <= 'Z' {
			b |= 0x20
		}
		if b != kw[j] {
			return false
		}
	}
	return true
}

// rarestByte returns the offset in kw of the byte to watch for, the cheapest
// by a small cost model of the scan: every occurrence of the byte costs a test
// of its neighbours (weight 2), and an occurrence whose neighbours are those of
// kw costs a keyword comparison (weight 20). A neighbour kw does not have
// filters nothing.
func rarestByte(kw string) int {
	p := func(b byte) float64 { return float64(byteFrequency(b)) / 10000 }
	best, bestCost := 0, 0.0
	for j := 0; j < len(kw); j++ {
		pass := 1.0
		if j > 0 {
			pass *= p(kw[j-1])
		}
		if j+1 < len(kw) {
			pass *= p(kw[j+1])
		}
		cost := p(kw[j]) * (2 + 20*pass)
		if j == 0 || cost < bestCost {
			best, bestCost = j, cost
		}
	}
	return best
}

// byteFrequency is a rough frequency of b in English log text, in units of
// 1/10000.
func byteFrequency(b byte) int {
	const letters = "82 15 28 43 127 22 20 61 70 2 8 40 24 67 75 19 1 60 63 91 28 10 24 2 20 1"
	switch {
	case b >= 'a' && b <= 'z':
		return letterFrequency(letters, int(b-'a')) * 10
	case b >= 'A' && b <= 'Z':
		return letterFrequency(letters, int(b-'A'))
	case b >= '0' && b <= '9':
		return 200
	case b == ' ':
		return 1500
	case b == '@':
		return 5
	case b == '_', b == '=':
		return 50
	default:
		return 150 // - . : / and other punctuation
	}
}

func letterFrequency(table string, k int) int {
	f := strings.Fields(table)[k]
	n := 0
	for i := 0; i < len(f); i++ {
		n = n*10 + int(f[i]-'0')
	}
	return n
}
