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
	// vendor: gitleaks' rules (gitleaks.go); nil in tests of runls' own rules alone.
	vendor *vendorRules
	// viaAC[k] lists the triggers of rules found by the vendor automaton's
	// keyword k (kw as written, off unused).
	viaAC [][]trigger
	// hot[b]: some keyword is watched for at byte b (the fast test of the scan);
	// hotOrPath adds the bytes at which a path may start, for HidingOutside's
	// single pass.
	hot, hotOrPath [256]uint8
	// near[b] tests the bytes around a hot byte b (the second test).
	near [256]neighbours
	// triggers[b] lists the keywords watched for at byte b.
	triggers [256][]trigger
}

// trigger is a keyword watched for at one of its bytes.
type trigger struct {
	kw   string // the keyword (lower case when fold)
	off  int32  // offset of the watched byte in kw
	rule int16  // index in rules
	fold bool
}

// NewCredentialMasker returns the masker of the built-in credential rules.
func NewCredentialMasker() *CredentialMasker {
	vr, err := vendorRulesOnce()
	if err != nil {
		// The configuration is embedded in the gitleaks module: it loads the
		// same way every time, and every test run loads it.
		panic("masking: " + err.Error())
	}
	return newCredentialMasker(compiledRules, vr)
}

// newCredentialMasker returns the masker of rules and, when vr is not nil,
// of the vendor rules, whose automaton then finds the keywords of rules too.
func newCredentialMasker(rules []rule, vr *vendorRules) *CredentialMasker {
	m := &CredentialMasker{rules: rules, vendor: vr}
	if vr != nil {
		index := map[string]int16{}
		for i := range rules {
			index[rules[i].name] = int16(i)
		}
		m.viaAC = make([][]trigger, len(vr.hand))
		for k, hs := range vr.hand {
			for _, h := range hs {
				if ri, ok := index[h.rule]; ok {
					m.viaAC[k] = append(m.viaAC[k], trigger{kw: h.kw, rule: ri, fold: h.fold})
				}
			}
		}
	}
	m.hotOrPath = pathTrigger
	// Bytes the scan stops at anyway (path starts, one-byte keywords) cost a
	// keyword nothing more to be watched for at.
	var already [256]bool
	for b, t := range pathTrigger {
		already[b] = t != 0
	}
	for _, r := range rules {
		for _, kw := range r.keywords {
			if len(kw) == 1 {
				already[kw[0]] = true
			}
		}
	}
	for ri, r := range rules {
		if vr != nil && viaAutomaton(&r.ruleSpec) {
			continue
		}
		for _, kw := range r.keywords {
			if r.fold {
				kw = strings.ToLower(kw)
			}
			off := rarestByte(kw, &already)
			already[kw[off]] = true
			if r.fold && isASCIILetter(kw[off]) {
				already[kw[off]^0x20] = true
			}
			t := trigger{kw: kw, off: int32(off), rule: int16(ri), fold: r.fold}
			b := kw[off]
			m.watch(b, t)
			if r.fold && isASCIILetter(b) {
				m.watch(b^0x20, t)
			}
		}
	}
	return m
}

// neighbours are the bytes found around a hot byte in its keywords, kept
// apart by where the byte is in the keyword, so that a keyword that starts
// there does not switch off the test of the byte before for the others.
type neighbours struct {
	single               bool      // a one-byte keyword: nothing to test
	inner, first, last   bool      // some keyword has the byte inside, first, last
	innerPrev, innerNext [4]uint64 // the bytes around it inside a keyword
	firstNext, lastPrev  [4]uint64 // the byte after it when first, before it when last
}

// match reports whether the bytes around text[i] are those of one of the keywords.
func (n *neighbours) match(text string, i int) bool {
	if n.single {
		return true
	}
	hasPrev, hasNext := i > 0, i+1 < len(text)
	return n.last && hasPrev && inSet(&n.lastPrev, text[i-1]) ||
		n.first && hasNext && inSet(&n.firstNext, text[i+1]) ||
		n.inner && hasPrev && hasNext && inSet(&n.innerPrev, text[i-1]) && inSet(&n.innerNext, text[i+1])
}

// watch adds the trigger t at byte b.
func (m *CredentialMasker) watch(b byte, t trigger) {
	m.triggers[b] = append(m.triggers[b], t)
	m.hot[b] = 1
	m.hotOrPath[b] = 1
	n := &m.near[b]
	off := int(t.off)
	hasPrev, hasNext := off > 0, off+1 < len(t.kw)
	switch {
	case hasPrev && hasNext:
		n.inner = true
		addByte(&n.innerPrev, t.kw[off-1], t.fold)
		addByte(&n.innerNext, t.kw[off+1], t.fold)
	case hasNext:
		n.first = true
		addByte(&n.firstNext, t.kw[off+1], t.fold)
	case hasPrev:
		n.last = true
		addByte(&n.lastPrev, t.kw[off-1], t.fold)
	default:
		n.single = true
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
	return m.scanAll(text, out, nil, 0)
}

// scanAll is scan, then the credential rules again on the readable views of
// text (views.go), their spans mapped back onto text.
//
// A view is read only when a keyword of the vendor rules occurs in the text,
// a rule that cues views was tried (a statement's `";`, which may be
// `\";` in JSON) or something was hidden in it: undoing escapes and
// indentation makes no keyword, and the rules of rules.go hide nothing in
// text where none of those keywords (password, secret, token, key, auth, …)
// occurs.
//
// depth is how many decodings of base64 text is inside (runs.go); the long
// runs of text are read too when the vendor rules are loaded (the whole
// masker, not a test's single rule).
func (m *CredentialMasker) scanAll(text string, out []Span, paths *PathRedactor, depth int) ([]Span, int) {
	from := len(out)
	out, open, cue := m.scan(text, out, paths)
	if m.vendor != nil {
		out = m.runSecrets(text, out, depth)
	}
	var levels [maxViews]Mapping
	view := text
	for n := 0; n < maxViews && (cue || len(out) > from); n++ {
		v, mp, ok := readable(view)
		if !ok {
			break
		}
		levels[n], view = mp, v
		from = len(out)
		var o int
		out, o, cue = m.scan(view, out, nil)
		for k := from; k < len(out); k++ {
			s, e := out[k].Start, out[k].End
			for l := n; l >= 0; l-- {
				s, e = levels[l].OriginalRange(s, e)
			}
			out[k].Start, out[k].End = s, e
		}
		if o >= 0 {
			for l := n; l >= 0; l-- {
				o = levels[l].Original(o)
			}
			if open < 0 || o < open {
				open = o
			}
		}
	}
	return out, open
}

// scan finds the credentials in text and, when paths is not nil, the paths it
// hides too, in one pass; cue reports that a keyword of the vendor rules occurs.
func (m *CredentialMasker) scan(text string, out []Span, paths *PathRedactor) (_ []Span, open int, cue bool) {
	st := scanState{open: -1, keyAt: -1}
	hot := &m.hot
	if paths != nil {
		hot = &m.hotOrPath
	}
	pathsTo := 0 // the end of the last path found: no path starts inside it
	for i := 0; ; i++ {
		if i = skipCold(text, i, hot); i >= len(text) {
			break
		}
		b := text[i]
		if paths != nil && pathTrigger[b] != 0 && i >= pathsTo {
			if start, end, ok := paths.pathAt(text, i); ok {
				out = append(out, Span{Start: start, End: end, Placeholder: PathPlaceholder})
				pathsTo = end
			}
		}
		if m.hot[b] == 0 || !m.near[b].match(text, i) {
			continue
		}
		ts := m.triggers[b]
		for k := range ts {
			t := &ts[k]
			s := i - int(t.off)
			if s < int(st.scanned[t.rule]) || s < 0 || !hasKeyword(text[s:], t.kw, t.fold) {
				continue
			}
			out = m.try(text, t.rule, s, &st, out)
		}
	}
	if m.vendor != nil {
		var buf [16]occurrence
		occ := m.vendor.keywords.find(text, buf[:0])
		for _, o := range occ {
			for k := range m.viaAC[o.keyword] {
				t := &m.viaAC[o.keyword][k]
				s := int(o.start)
				if s < int(st.scanned[t.rule]) || !t.fold && text[s:s+len(t.kw)] != t.kw {
					continue
				}
				out = m.try(text, t.rule, s, &st, out)
			}
		}
		out, cue = m.vendor.findCued(text, occ, out)
	}
	return out, st.open, cue || st.cue
}

// scanState is what scan keeps from keyword to keyword.
type scanState struct {
	open int // the start of a block not closed by the end of text, or -1
	// scanned[r] is where rule r's last attempt ended: a keyword found before
	// it was part of that attempt (or of its match).
	scanned               [maxRules]int32 // small: it is zeroed on every call, and records are short
	keyAt, keyFrom, keyTo int
	parts                 keyParts
	cue                   bool // a rule that cues the views was tried (ruleSpec.cues)
}

// try runs rule ri where its keyword starts at s.
func (m *CredentialMasker) try(text string, ri int16, s int, st *scanState, out []Span) []Span {
	r := &m.rules[ri]
	st.cue = st.cue || r.cues
	if r.custom != nil {
		// No scanned gate: its keywords overlap (!== holds != and ==).
		if sp, ok := r.custom(text, s); ok {
			out = append(out, sp)
		}
		return out
	}
	start := s
	switch {
	case r.keyBefore:
		if s != st.keyAt {
			// The operator rules share the key: read it once per operator.
			st.keyAt, st.keyTo = s, keyEnd(text, s)
			st.keyFrom = wordStart(text, st.keyTo)
			st.parts = partsOf(text[st.keyFrom:st.keyTo])
		}
		start = st.keyFrom
		if start == st.keyTo || r.keyCheck != nil && !r.keyCheck(text[start:st.keyTo], st.parts) {
			return out
		}
	case r.wordStart:
		start = wordStart(text, s)
	}
	if start < int(st.scanned[ri]) || r.boundary && start > 0 && isWordByte(text[start-1]) ||
		r.near != nil && !r.near(text, s) {
		st.scanned[ri] = int32(max(int(st.scanned[ri]), s+1))
		return out
	}
	var end, o int
	out, end, o = r.apply(text, start, out)
	st.scanned[ri] = int32(max(end, s+1))
	if o >= 0 && (st.open < 0 || o < st.open) {
		st.open = o
	}
	return out
}

// skipCold returns the index of the first byte at or after i that is hot
// (hot[b] != 0), or len(text). Most bytes are cold, so this loop is most of
// the cost of masking ordinary text: it tests eight bytes with one branch.
func skipCold(text string, i int, hot *[256]uint8) int {
	for ; i+8 <= len(text); i += 8 {
		t := text[i : i+8]
		if hot[t[0]]|hot[t[1]]|hot[t[2]]|hot[t[3]]|hot[t[4]]|hot[t[5]]|hot[t[6]]|hot[t[7]] != 0 {
			break
		}
	}
	for ; i < len(text); i++ {
		if hot[text[i]] != 0 {
			return i
		}
	}
	return len(text)
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
		endAt, end, closed := r.findBlockEnd(text, start+mt[1])
		open := -1
		if !closed {
			open = start
		} else if bodyBytes(text[start+mt[1]:endAt]) < minKeyBody {
			// "-----BEGIN PRIVATE KEY-----\nanything\n-----END …": an example, not a key.
			return out, end, -1
		}
		return append(out, Span{Start: start, End: end, Placeholder: SecretPlaceholder}), end, open
	}
	matchEnd := start + mt[1]
	from, to, hidden := mt[0], mt[1], 0
	if len(r.hide) > 0 {
		from = -1
		for _, g := range r.hide {
			if mt[2*g] >= 0 {
				from, to, hidden = mt[2*g], mt[2*g+1], g
				break
			}
		}
		if from < 0 {
			return out, matchEnd, -1
		}
	}
	// The hidden part's end by its context, before accept reads it.
	extended := start + to
	if r.extend != nil {
		extended = max(extended, r.extend(text, start, mt, start+to))
	}
	if r.accept != nil {
		sub := make([]string, len(mt)/2)
		for g := range sub {
			if mt[2*g] >= 0 {
				sub[g] = text[start+mt[2*g] : start+mt[2*g+1]]
			}
		}
		sub[hidden] = text[start+from : extended]
		before := byte(0)
		if start > 0 {
			before = text[start-1]
		}
		if !r.accept(sub, before) {
			return out, matchEnd, -1
		}
	}
	if to <= from {
		return out, matchEnd, -1
	}
	from, to = start+from, extended
	matchEnd = max(matchEnd, to)
	if r.glued {
		to = gluedEnd(text, to)
		matchEnd = max(matchEnd, to)
	}
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

// minKeyBody is the least a closed key block holds between its BEGIN and END
// lines (white space aside) to be hidden: gitleaks' private-key rule asks
// for 64 characters from the BEGIN line to the END line's "KEY-----".
const minKeyBody = 16

func bodyBytes(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if !isSpace(s[i]) && s[i] != '\\' {
			n++
		}
	}
	return n
}

// findBlockEnd returns the start and end of the first blockEnd match at or after from,
// and true; or the end of text and false when the block is not closed yet.
func (r *rule) findBlockEnd(text string, from int) (int, int, bool) {
	for from < len(text) {
		k := strings.Index(text[from:], r.blockEndKeyword)
		if k < 0 {
			break
		}
		at := from + k
		if mt := r.blockEnd.FindStringIndex(text[at:min(len(text), at+r.maxLen)]); mt != nil {
			return at, at + mt[1], true
		}
		from = at + len(r.blockEndKeyword)
	}
	return len(text), len(text), false
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
	// The rest of a longer operator (!=, ::=, ?=, .=).
	for n := 0; n < 3 && k > 0 && strings.IndexByte("!:?.=", text[k-1]) >= 0; n++ {
		k--
	}
	for k > 0 && (text[k-1] == ' ' || text[k-1] == '\t') {
		k--
	}
	// A C array or its size: secret[] = "…", char key[25] = "…".
	if k > 0 && text[k-1] == ']' {
		if open := strings.LastIndexByte(text[max(0, k-8):k], '['); open >= 0 {
			k = max(0, k-8) + open
		}
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
// by a small cost model of the scan: every occurrence of a byte the scan does
// not stop at yet costs a test of its neighbours (weight 5, a likely branch
// miss), and an occurrence whose neighbours are those of kw costs keyword
// comparisons (weight 20). A neighbour kw does not have filters nothing.
func rarestByte(kw string, already *[256]bool) int {
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
		cost := p(kw[j]) * 20 * pass
		if !already[kw[j]] {
			cost += p(kw[j]) * 5
		}
		if j == 0 || cost < bestCost {
			best, bestCost = j, cost
		}
	}
	return best
}

// byteFrequency is a rough frequency of b in English log text, in units of
// 1/10000.
func byteFrequency(b byte) int {
	switch {
	case b >= 'a' && b <= 'z':
		return letterFrequency[b-'a'] * 10
	case b >= 'A' && b <= 'Z':
		return letterFrequency[b-'A']
	case b >= '0' && b <= '9':
		return 200
	case b == ' ':
		return 1500
	case b == '"':
		return 400 // agents' logs are full of JSON
	case b == '\'':
		return 200
	case b == '@':
		return 5
	case b == '_':
		return 30
	case b == '-', b == '=':
		return 100
	default:
		return 150 // . : / and other punctuation
	}
}

// letterFrequency is the frequency of each letter in English, in 1/1000.
var letterFrequency = [26]int{82, 15, 28, 43, 127, 22, 20, 61, 70, 2, 8, 40, 24, 67, 75, 19, 1, 60, 63, 91, 28, 10, 24, 2, 20, 1}
