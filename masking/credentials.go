package masking

import "strings"

// CredentialMasker hides credentials behind SecretPlaceholder, by the rules of
// ruleTable. It is safe for concurrent use.
//
// Speed comes from the pre-filter: each rule keyword is watched for at one of
// its rarest bytes, so a text is read once, byte by byte, through a table; only
// where a keyword occurs does its rule's regular expression run, and then on
// that line alone (a multi-line rule: from the keyword to the end of text).
// Ordinary text costs about one table look-up per byte.
type CredentialMasker struct {
	rules []rule
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
	for ri, r := range rules {
		for _, kw := range r.keywords {
			if r.fold {
				kw = strings.ToLower(kw)
			}
			off := rarestByte(kw)
			t := trigger{rule: ri, kw: kw, off: off, fold: r.fold}
			b := kw[off]
			m.triggers[b] = append(m.triggers[b], t)
			if r.fold && isASCIILetter(b) {
				m.triggers[b^0x20] = append(m.triggers[b^0x20], t)
			}
		}
	}
	return m
}

// Mask returns the spans of the credentials in text, and the start of a PEM
// block that is not closed by the end of text (or -1).
func (m *CredentialMasker) Mask(text string) ([]Span, int) {
	return stabilise(text, m.find)
}

// maxRules bounds the rule table so that find keeps its per-rule state on the stack.
const maxRules = 64

func (m *CredentialMasker) find(text string, out []Span) ([]Span, int) {
	open := -1
	// scanned[r] is where rule r's last window ended: a keyword before it lies
	// in a window already searched.
	var scanned [maxRules]int
	for i := 0; i < len(text); i++ {
		ts := m.triggers[text[i]]
		if len(ts) == 0 {
			continue
		}
		for _, t := range ts {
			s := i - t.off
			if s < scanned[t.rule] || s < 0 || s+len(t.kw) > len(text) || !hasKeyword(text[s:], t.kw, t.fold) {
				continue
			}
			r := &m.rules[t.rule]
			ws, we := lineAround(text, s)
			if r.multiline {
				ws, we = s, len(text)
			}
			scanned[t.rule] = we
			var o int
			out, o = r.apply(text, ws, we, out)
			if o >= 0 && (open < 0 || o < open) {
				open = o
			}
		}
	}
	return out, open
}

// apply runs the rule on text[ws:we] and appends the spans it hides.
func (r *rule) apply(text string, ws, we int, out []Span) ([]Span, int) {
	open := -1
	for _, mt := range r.re.FindAllStringSubmatchIndex(text[ws:we], -1) {
		start, end := mt[0], mt[1]
		if len(r.hide) > 0 {
			start = -1
			for _, g := range r.hide {
				if mt[2*g] >= 0 {
					start, end = mt[2*g], mt[2*g+1]
					break
				}
			}
			if start < 0 {
				continue
			}
		}
		if r.accept != nil {
			sub := make([]string, len(mt)/2)
			for g := range sub {
				if mt[2*g] >= 0 {
					sub[g] = text[ws+mt[2*g] : ws+mt[2*g+1]]
				}
			}
			if !r.accept(sub) {
				continue
			}
		}
		if end <= start {
			continue
		}
		if r.openGroup > 0 && mt[2*r.openGroup] < 0 && ws+mt[1] == len(text) && open < 0 {
			open = ws + mt[0]
		}
		out = append(out, Span{Start: ws + start, End: ws + end, Placeholder: SecretPlaceholder})
	}
	return out, open
}

// lineAround returns the bounds of the line that holds byte i.
func lineAround(text string, i int) (int, int) {
	ws := strings.LastIndexByte(text[:i], '\n') + 1
	we := strings.IndexByte(text[i:], '\n')
	if we < 0 {
		return ws, len(text)
	}
	return ws, i + we
}

// hasKeyword reports whether text starts with kw (kw in lower case when fold).
func hasKeyword(text, kw string, fold bool) bool {
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

// rarestByte returns the offset of the byte of kw that is least frequent in
// ordinary log text, so that the scan stops there as seldom as possible.
func rarestByte(kw string) int {
	best, bestFreq := 0, 1<<30
	for j := 0; j < len(kw); j++ {
		if f := byteFrequency(kw[j]); f < bestFreq {
			best, bestFreq = j, f
		}
	}
	return best
}

// byteFrequency is a rough frequency of b in English log text, in tenths of a
// per mille; only the order matters.
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
