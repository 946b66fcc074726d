package masking

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
)

// vendorRules are the credential rules of gitleaks' default configuration
// (github.com/zricethezav/gitleaks/v8/config, embedded in the module): some
// 220 token shapes, kept up to date by many people as vendors add them, each
// with keywords, an entropy threshold and allow-lists. runls takes the rules
// and applies them itself rather than through gitleaks' detect package, for
// three reasons: it needs the byte range of each secret (detect reports lines
// and columns of the match), it masks short records millions of times (detect
// lower-cases and scans each text whole, per rule), and detect pulls in
// gitleaks' sources, archives and reporting.
//
// How a text is scanned, and where it differs from gitleaks:
//   - One pass of an Aho-Corasick automaton finds every keyword (ASCII case
//     folded, as gitleaks lower-cases the text). A rule runs only where one
//     of its keywords occurs, and only on a window around it: as far as the
//     rule's longest match reaches on each side, widened to white space.
//     gitleaks runs a rule over the whole fragment once any keyword is in it;
//     here a match far from every keyword of its rule is not looked for.
//   - The rules written as "a name that says the vendor, an operator, a
//     value" (gitleaks' semi-generic rules, generic-api-key among them) run
//     only where the keyword is followed, within the rule's reach, by an
//     operator: in prose ("the token budget") they cost nothing more.
//   - The secret is the rule's secret group (or its first non-empty group),
//     kept when its Shannon entropy is above the rule's threshold and no
//     allow-list (the global ones, then the rule's) allows it: regexes on the
//     secret, the match or the line, and stop words, as gitleaks applies them.
//   - Rules that hold for some file names only (Terraform, NuGet, Kubernetes
//     YAML, PHP) apply to any text: agents paste such files into logs.
//   - A "gitleaks:allow" comment does not allow a secret: it is meant for a
//     repository scan, not for what an agent is shown.
//   - gitleaks' private-key rule is left to runls' own PEM rule, which also
//     hides a block whose END line is not written yet.
type vendorRules struct {
	rules    []vendorRule
	keywords *keywordSet
	// byKeyword[k] lists the rules (indexes in rules) that keyword k triggers.
	byKeyword [][]uint16
	global    []*config.Allowlist
	// generic is gitleaks' generic-api-key rule, whose allow-lists runls'
	// own assignment rule applies too.
	generic *vendorRule
	// hand[k] lists the rules of rules.go that keyword k triggers: the
	// automaton finds their keywords too, in the same pass, so that the byte
	// scan of credentials.go watches only for operators and paths.
	hand [][]handKeyword
}

// handKeyword is a keyword of a rule of rules.go, as written.
type handKeyword struct {
	rule string
	kw   string
	fold bool
}

// viaAutomaton reports whether the keywords of a rule of rules.go are found
// by the automaton: not operators (":", "==", `("`) that key rules read
// backwards from, and not one byte long.
func viaAutomaton(r *ruleSpec) bool {
	if r.keyBefore || r.custom != nil {
		return false
	}
	for _, kw := range r.keywords {
		if len(kw) < 2 {
			return false
		}
	}
	return true
}

type vendorRule struct {
	id string
	re *regexp.Regexp // gitleaks' config compiles with the standard library's
	// anchored, when set, is re anchored at the match's start, for a rule
	// whose every match starts with one of its keywords (gitleaks' rules for a
	// vendor's prefixed token: "ghp_", "xoxb-", "AKIA"): it runs once at each
	// occurrence of a keyword and fails at the first byte that does not fit,
	// where re would search a window around it. boundary: re starts with \b,
	// which the anchored run cannot see; find checks the byte before.
	anchored *regexp.Regexp
	boundary bool
	// leads are what an anchored match starts with; find tries the anchored
	// expression only where one of them is (most occurrences of a short
	// keyword such as "sk" are in words, not tokens). nil: no cheap test.
	leads       []lead
	secretGroup int
	entropy     float64
	allow       []*config.Allowlist
	// reach bounds how far a match extends from its keyword, each way.
	reach int
	// named: the rule is semi-generic (name, operator, value): its match
	// starts up to keyLead bytes of the name before the keyword, and it runs
	// anchored there, only where an operator follows the keyword (opFollows).
	named   bool
	keyLead int
}

// vendorRulesOnce loads and compiles the rules once, on first use: some 40 ms,
// which a run with masking off never pays.
var vendorRulesOnce func() (*vendorRules, error)

// init sets vendorRulesOnce: loadVendorRules reads ruleTable, whose rules
// call vendorRulesOnce, so the variable cannot be initialized in place.
func init() { vendorRulesOnce = sync.OnceValues(loadVendorRules) }

// skipVendorRules are gitleaks rules that runls applies in its own way.
var skipVendorRules = map[string]bool{
	"private-key": true, // the PEM block rule of rules.go, which knows open blocks
	// For .tf and .hcl files only, where `password = "…"` is Terraform's;
	// in any text it is a plain assignment, which the assignment rule of
	// rules.go reads with its placeholders.
	"hashicorp-tf-password": true,
}

func loadVendorRules() (*vendorRules, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("read gitleaks' default config: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("read gitleaks' default config: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("compile gitleaks' default config: %w", err)
	}
	vr := &vendorRules{global: cfg.Allowlists}
	var keywords []string
	kwIndex := map[string]int{}
	// keywordID returns the index of kw (lower-cased) among keywords, adding it.
	keywordID := func(kw string) int {
		kw = strings.ToLower(kw)
		k, ok := kwIndex[kw]
		if !ok {
			k = len(keywords)
			kwIndex[kw] = k
			keywords = append(keywords, kw)
			vr.byKeyword = append(vr.byKeyword, nil)
			vr.hand = append(vr.hand, nil)
		}
		return k
	}
	for _, r := range cfg.GetOrderedRules() {
		if r.Regex == nil || r.SkipReport || skipVendorRules[r.RuleID] || len(r.Keywords) == 0 {
			// Path-only rules find files, not text; a rule without keywords
			// (none in the default config) would run on every text.
			continue
		}
		expr := r.Regex.String()
		parsed, err := syntax.Parse(expr, syntax.Perl)
		if err != nil {
			return nil, fmt.Errorf("gitleaks rule %s: %w", r.RuleID, err)
		}
		parsed = parsed.Simplify()
		vrule := vendorRule{
			id:          r.RuleID,
			re:          r.Regex,
			secretGroup: r.SecretGroup,
			entropy:     r.Entropy,
			allow:       r.Allowlists,
			reach:       min(maxLen(parsed), unboundedReach),
		}
		raw, err := syntax.Parse(expr, syntax.Perl)
		if err != nil {
			return nil, fmt.Errorf("gitleaks rule %s: %w", r.RuleID, err)
		}
		// A rule of one semi-generic expression (not one alternative of several).
		vrule.named = raw.Op != syntax.OpAlternate && strings.Count(expr, semiGenericOperator) == 1
		if leads, boundary, ok := leadsOf(parsed); ok && keywordsLead(leads, r.Keywords) {
			vrule.anchored = regexp.MustCompile(`^(?:` + expr + `)`)
			vrule.boundary = boundary
			vrule.leads = leads
		} else if vrule.named {
			// Anchored at the keyword, without the name before it: Go's
			// matcher would otherwise follow every length of that name at once.
			vrule.anchored = regexp.MustCompile(`^(?:` + stripLead(raw).String() + `)`)
			vrule.keyLead = keyLead(raw)
		}
		ri := uint16(len(vr.rules))
		vr.rules = append(vr.rules, vrule)
		for _, kw := range r.Keywords {
			if k := keywordID(kw); !slices.Contains(vr.byKeyword[k], ri) {
				vr.byKeyword[k] = append(vr.byKeyword[k], ri)
			}
		}
	}
	for i := range ruleTable {
		r := &ruleTable[i]
		if !viaAutomaton(r) {
			continue
		}
		for _, kw := range r.keywords {
			k := keywordID(kw)
			vr.hand[k] = append(vr.hand[k], handKeyword{rule: r.name, kw: kw, fold: r.fold})
		}
	}
	vr.keywords = newKeywordSet(keywords)
	for i := range vr.rules {
		if vr.rules[i].id == "generic-api-key" {
			vr.generic = &vr.rules[i]
		}
	}
	return vr, nil
}

// semiGenericOperator is the assignment operator of gitleaks' semi-generic
// rules (utils.GenerateSemiGenericRegex): the mark of a named rule.
const semiGenericOperator = `(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

// Reaches bound the window a rule runs on around a keyword.
const (
	// unboundedReach bounds the match of a rule that has no longest match
	// (a token of {20,} characters). An anchored rule fails where the text
	// stops fitting, so its window may be long; a rule searched for in a
	// window pays for every byte of it, so that window is shorter, and a
	// secret that runs to its end is hidden to the end of its token.
	unboundedReach = 4 << 10
	maxWindowReach = 512
	reachSlack     = 64 // widen a window this far at most to reach white space
)

// maxLen returns the most bytes a match of re can span (a character counted
// as up to utf8.UTFMax bytes), at most unboundedReach.
func maxLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += max(utf8.RuneLen(r), 1)
		}
		return n
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0
		}
		return utf8.RuneLen(min(re.Rune[len(re.Rune)-1], utf8.MaxRune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture:
		return maxLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return unboundedReach
	case syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max < 0 {
			return unboundedReach
		}
		return min(re.Max*maxLen(re.Sub[0]), unboundedReach)
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n = min(n+maxLen(s), unboundedReach)
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			n = max(n, maxLen(s))
		}
		return n
	}
	return 0 // empty-width operators
}

// stripLead returns re without the runs of name that may lead it ([\w.-]{0,n}?),
// at any depth of its first element.
func stripLead(re *syntax.Regexp) *syntax.Regexp {
	if re.Op != syntax.OpConcat {
		return re
	}
	for i, sub := range re.Sub {
		if sub.Op == syntax.OpRepeat && sub.Min == 0 && sub.Sub[0].Op == syntax.OpCharClass {
			continue
		}
		rest := append([]*syntax.Regexp{stripLead(sub)}, re.Sub[i+1:]...)
		return &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: rest}
	}
	return &syntax.Regexp{Op: syntax.OpEmptyMatch}
}

// keyLead returns how many bytes of name a semi-generic rule's match may
// start with before its keyword: its leading [\w.-]{0,n}? runs.
func keyLead(re *syntax.Regexp) int {
	if re.Op != syntax.OpConcat {
		return 0
	}
	n := 0
	for _, sub := range re.Sub {
		if sub.Op == syntax.OpRepeat && sub.Min == 0 && sub.Sub[0].Op == syntax.OpCharClass {
			n += sub.Max
			continue
		}
		return n + keyLead(sub)
	}
	return n
}

// lead is how a match can start: a literal (ASCII case folded when fold),
// then, when next is not nil, a byte of next.
type lead struct {
	lit  string
	fold bool
	next *[256]bool
}

// at reports whether text[i:] starts as l says.
func (l *lead) at(text string, i int) bool {
	if len(text)-i < len(l.lit) {
		return false
	}
	if l.fold {
		if !hasKeyword(text[i:], l.lit, true) {
			return false
		}
	} else if text[i:i+len(l.lit)] != l.lit {
		return false
	}
	j := i + len(l.lit)
	return l.next == nil || j < len(text) && l.next[text[j]]
}

// leadsOf returns the ways one of which starts every match of re, as far as
// its leading literals, alternations and captures tell (ok false when they do
// not: a class, a repetition); boundary reports a leading \b.
func leadsOf(re *syntax.Regexp) (leads []lead, boundary, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []lead{literalLead(re)}, false, true
	case syntax.OpCapture:
		return leadsOf(re.Sub[0])
	case syntax.OpConcat:
		for i, sub := range re.Sub {
			if sub.Op == syntax.OpWordBoundary && i == 0 {
				boundary = true
				continue
			}
			ls, b, ok := leadsOf(sub)
			if ok && sub.Op == syntax.OpLiteral && i+1 < len(re.Sub) {
				ls[0].next = firstBytes(re.Sub[i+1])
			}
			return ls, boundary || b, ok
		}
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			ls, b, ok := leadsOf(sub)
			if !ok || b {
				return nil, false, false
			}
			leads = append(leads, ls...)
		}
		return leads, false, true
	}
	return nil, false, false
}

func literalLead(re *syntax.Regexp) lead {
	l := lead{lit: string(re.Rune), fold: re.Flags&syntax.FoldCase != 0}
	if l.fold {
		l.lit = strings.ToLower(l.lit)
	}
	return l
}

// firstBytes returns the bytes a match of re can start with, or nil when it
// cannot tell (or re can match the empty string).
func firstBytes(re *syntax.Regexp) *[256]bool {
	switch re.Op {
	case syntax.OpCharClass:
		var set [256]bool
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
				set[r] = true
			}
			if hi >= utf8.RuneSelf {
				for b := 0xC0; b < 0x100; b++ { // the lead bytes of multi-byte runes
					set[b] = true
				}
			}
		}
		return &set
	case syntax.OpLiteral:
		if len(re.Rune) == 0 || re.Rune[0] >= utf8.RuneSelf || re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		var set [256]bool
		set[re.Rune[0]] = true
		return &set
	case syntax.OpCapture, syntax.OpPlus:
		return firstBytes(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return firstBytes(re.Sub[0])
		}
	case syntax.OpConcat:
		if len(re.Sub) > 0 {
			return firstBytes(re.Sub[0])
		}
	}
	return nil
}

// keywordsLead reports whether each lead starts with one of the keywords
// (ASCII case folded): then every match starts where a keyword occurs.
func keywordsLead(leads []lead, keywords []string) bool {
	for _, l := range leads {
		ok := false
		for _, kw := range keywords {
			ok = ok || strings.HasPrefix(strings.ToLower(l.lit), strings.ToLower(kw))
		}
		if !ok {
			return false
		}
	}
	return len(leads) > 0
}

// find appends the spans of the secrets the rules find in text.
func (vr *vendorRules) find(text string, out []Span) []Span {
	var buf [16]occurrence
	out, _ = vr.findCued(text, vr.keywords.find(text, buf[:0]), out)
	return out
}

// findCued is find on the keywords' occurrences occ, and reports whether a rule was tried: a keyword occurs
// where a token could start, or before an operator.
func (vr *vendorRules) findCued(text string, occ []occurrence, out []Span) ([]Span, bool) {
	if len(occ) == 0 {
		return out, false
	}
	cue := false
	var tried attempts
	// The windows each rule runs on, merged where they overlap (few texts
	// have any: they are allocated when needed).
	var wins []ruleWindow
	for _, o := range occ {
		for _, ri := range vr.byKeyword[o.keyword] {
			r := &vr.rules[ri]
			if r.named {
				if !opFollows(text, int(o.end), r.reach) {
					continue
				}
				// The match starts with the name, up to keyLead bytes of it.
				k, from := int(o.start), int(o.start)
				for from > 0 && from > k-r.keyLead && isKeyByte(text[from-1]) {
					from--
				}
				cue = true
				if !tried.add(ri, k) {
					continue
				}
				var end int
				out, end = r.applyAt(vr, text, k, widenRight(text, min(len(text), k+r.reach)), from, out)
				tried.matched(ri, end)
				continue
			}
			if r.anchored != nil {
				s := int(o.start)
				if r.boundary && s > 0 && isWordByte(text[s-1]) || !r.leadAt(text, s) {
					continue
				}
				cue = true
				out, _ = r.applyAt(vr, text, s, widenRight(text, min(len(text), s+r.reach)), s, out)
				continue
			}
			cue = true
			reach := min(r.reach, maxWindowReach)
			lo, hi := int(o.start)-reach, int(o.end)+reach
			wins = append(wins, ruleWindow{rule: ri, lo: widenLeft(text, lo), hi: widenRight(text, hi)})
		}
	}
	if len(wins) == 0 {
		return out, cue
	}
	sort.Slice(wins, func(i, j int) bool {
		if wins[i].rule != wins[j].rule {
			return wins[i].rule < wins[j].rule
		}
		return wins[i].lo < wins[j].lo
	})
	for i := 0; i < len(wins); {
		w := wins[i]
		j := i + 1
		for ; j < len(wins) && wins[j].rule == w.rule && wins[j].lo <= w.hi; j++ {
			w.hi = max(w.hi, wins[j].hi)
		}
		out = vr.rules[w.rule].apply(vr, text, w.lo, w.hi, out)
		i = j
	}
	return out, cue
}

// attempts are the starts where named rules were tried, so that the
// keywords of one name (secret_api_key) try it once. The first few are kept
// in an array (no allocation for the common text).
type attempts struct {
	n    int
	buf  [8]attempt
	more []attempt
}

type attempt struct {
	rule       uint16
	start, end int
}

func (a *attempts) at(i int) *attempt {
	if i < len(a.buf) {
		return &a.buf[i]
	}
	return &a.more[i-len(a.buf)]
}

// add reports whether rule should be tried at start: not tried there yet,
// and not inside its last match (a regular expression's search goes on
// after a match, so gitleaks finds no match that overlaps another).
func (a *attempts) add(rule uint16, start int) bool {
	for i := 0; i < a.n; i++ {
		if t := a.at(i); t.rule == rule && (t.start == start || start < t.end) {
			return false
		}
	}
	if a.n < len(a.buf) {
		a.buf[a.n] = attempt{rule: rule, start: start}
	} else {
		a.more = append(a.more, attempt{rule: rule, start: start})
	}
	a.n++
	return true
}

// matched notes that rule's attempt last added matched up to end.
func (a *attempts) matched(rule uint16, end int) {
	for i := a.n - 1; i >= 0; i-- {
		if t := a.at(i); t.rule == rule {
			t.end = end
			return
		}
	}
}

type ruleWindow struct {
	rule   uint16
	lo, hi int
}

// widenLeft moves a window's start back to white space (or the text's start),
// at most reachSlack bytes, so that it does not cut a token a rule would read.
func widenLeft(text string, lo int) int {
	if lo <= 0 {
		return 0
	}
	for k := lo; k > 0 && k > lo-reachSlack; k-- {
		if isSpace(text[k-1]) {
			return k
		}
	}
	return lo
}

func widenRight(text string, hi int) int {
	if hi >= len(text) {
		return len(text)
	}
	for k := hi; k < len(text) && k < hi+reachSlack; k++ {
		if isSpace(text[k]) {
			return k
		}
	}
	return hi
}

// opFollows reports whether a semi-generic rule can match with its keyword
// ending at end: within the rule's name part ([ \t\w.-]{0,20}, then up to three
// blanks or quotes) an assignment operator's first byte follows. It lets
// escaped quotes through, so that a name in a JSON string cues the rule's
// run on the readable view.
func opFollows(text string, end, reach int) bool {
	for j, n := end, 0; j < len(text) && n <= 20; j, n = j+1, n+1 {
		k := j
		// Up to three blanks or quotes, and the backslashes of escaped quotes.
		for q := 0; q < 6 && k < len(text) && (isSpace(text[k]) || text[k] == '"' || text[k] == '\'' || text[k] == '\\'); q++ {
			k++
		}
		if k < len(text) && strings.IndexByte("=>:|?,", text[k]) >= 0 {
			return true
		}
		if b := text[j]; !(b == ' ' || b == '\t' || b == '.' || b == '-' || isWordByte(b)) {
			return false
		}
	}
	return false
}

// leadAt reports whether an anchored match can start at i.
func (r *vendorRule) leadAt(text string, i int) bool {
	for k := range r.leads {
		if r.leads[k].at(text, i) {
			return true
		}
	}
	return false
}

// apply runs the rule on text[lo:hi] and appends the secrets it keeps.
func (r *vendorRule) apply(vr *vendorRules, text string, lo, hi int, out []Span) []Span {
	cut := r.reach > maxWindowReach && hi < len(text)
	for _, m := range r.re.FindAllStringSubmatchIndex(text[lo:hi], -1) {
		out = r.keep(vr, text, lo, hi, lo+m[0], cut, m, out)
	}
	return out
}

// applyAt runs the anchored rule on text[lo:hi], a match starting at lo (its
// whole match, for the allow-lists, starting at from), and returns where the
// match ended (lo when there was none), kept or not.
func (r *vendorRule) applyAt(vr *vendorRules, text string, lo, hi, from int, out []Span) ([]Span, int) {
	m := r.anchored.FindStringSubmatchIndex(text[lo:hi])
	if m == nil {
		return out, lo
	}
	return r.keep(vr, text, lo, hi, from, r.reach >= unboundedReach && hi < len(text), m, out), lo + m[1]
}

// keep vets the match m of text[lo:hi] as gitleaks does and appends its secret.
// cut says that the window may end before a match of the rule would: then a
// secret that runs to its end is hidden to the end of its token.
func (r *vendorRule) keep(vr *vendorRules, text string, lo, hi, from int, cut bool, m []int, out []Span) []Span {
	// In text's offsets: the match [ms, me) and the secret [ss, se).
	ms, me := from, lo+m[1]
	// gitleaks trims line ends off a match.
	for ms < me && text[ms] == '\n' {
		ms++
	}
	for me > ms && text[me-1] == '\n' {
		me--
	}
	ss, se := ms, me
	if n := len(m) / 2; n > 1 {
		if r.secretGroup > 0 {
			if r.secretGroup >= n || m[2*r.secretGroup] < 0 {
				return out
			}
			ss, se = lo+m[2*r.secretGroup], lo+m[2*r.secretGroup+1]
		} else {
			for g := 1; g < n; g++ {
				if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
					ss, se = lo+m[2*g], lo+m[2*g+1]
					break
				}
			}
		}
	}
	if se <= ss {
		return out
	}
	secret := text[ss:se]
	if r.entropy != 0 && shannonEntropy(secret) <= r.entropy {
		return out
	}
	if r.named && isEmptyAssignment(secret) {
		// "GITHUB_API_KEY=\nDYNATRACE_API_KEY=": the value of an empty
		// assignment read as the next line's name (gitleaks allows it by a
		// regex that wants the text to end there; in a record, words follow).
		return out
	}
	// The match as gitleaks sees it in a file, where it ends at the end of
	// the text or line: white space after it (the marker word that follows,
	// in a record) must not defeat an allow-list anchored at its end.
	match := strings.TrimRight(text[ms:me], " \t\r\n")
	line := lineAround(text, ms, me)
	if allowed(vr.global, secret, match, line) || allowed(r.allow, secret, match, line) {
		return out
	}
	if cut && se == hi {
		// The window may have cut the secret: hide the rest of its token too.
		for se < len(text) && !tokenStop[text[se]] {
			se++
		}
	}
	// A rule of a fixed length (glpat-[\w-]{20}) matches the start of a
	// longer token (a routable one): hide the token to its end.
	for se < len(text) && (isWordByte(text[se]) || text[se] == '-') {
		se++
	}
	return append(out, Span{Start: ss, End: se, Placeholder: SecretPlaceholder})
}

// isEmptyAssignment reports a name and "=" (DYNATRACE_API_KEY=,
// jdbc.snowflake.url=): the start of the next assignment, not a value.
func isEmptyAssignment(v string) bool {
	name, ok := strings.CutSuffix(v, "=")
	return ok && name != "" && strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == '_' || r == '.')
	}) < 0
}

// lineAround returns the lines of text that hold [s, e).
func lineAround(text string, s, e int) string {
	ls := strings.LastIndexByte(text[:s], '\n') + 1
	le := len(text)
	if k := strings.IndexByte(text[e:], '\n'); k >= 0 {
		le = e + k
	}
	return text[ls:le]
}

// allowed applies allow-lists as gitleaks' detect does to a finding without a
// commit or a path: an "or" list allows by a regex (on the secret, the match
// or the line, as it says) or a stop word in the secret; an "and" list needs
// all of its checks, so one that names commits or paths allows nothing here.
func allowed(lists []*config.Allowlist, secret, match, line string) bool {
	for _, a := range lists {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = match
		case "line":
			target = line
		}
		regex := a.RegexAllowed(target)
		stop, _ := a.ContainsStopWord(secret)
		if a.MatchCondition == config.AllowlistMatchAnd {
			if len(a.Commits) > 0 || len(a.Paths) > 0 ||
				len(a.Regexes) > 0 && !regex || len(a.StopWords) > 0 && !stop {
				continue
			}
			return true
		}
		if regex || stop {
			return true
		}
	}
	return false
}

// shannonEntropy is gitleaks' measure: over the runes of s, with frequencies
// taken over its length in bytes.
func shannonEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	var ascii [128]int
	var other map[rune]int
	for _, r := range s {
		if r < 128 {
			ascii[r]++
			continue
		}
		if other == nil {
			other = map[rune]int{}
		}
		other[r]++
	}
	inv := 1 / float64(len(s))
	e := 0.0
	add := func(c int) {
		if c > 0 {
			f := float64(c) * inv
			e -= f * math.Log2(f)
		}
	}
	for _, c := range ascii {
		add(c)
	}
	for _, c := range other {
		add(c)
	}
	return e
}
