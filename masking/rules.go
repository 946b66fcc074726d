package masking

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/zricethezav/gitleaks/v8/config"
)

// ruleSpec is one credential rule as written: the table below is the whole
// credential rule set. The rules are modelled on those of gitleaks
// (cmd/generate/config/rules) and trufflehog's detectors, trading a few of
// their checks (entropy, verification) for cheap shape checks.
type ruleSpec struct {
	name string
	// keywords: every match contains one of them. They are the cheap pre-filter:
	// the regular expression runs only on a line where a keyword occurs.
	keywords []string
	// fold: keywords match ASCII case-insensitively.
	fold bool
	// pattern is compiled once, when the package is initialised.
	pattern string
	// hide lists the submatch groups to hide, the first that took part in the
	// match; empty: the whole match.
	hide []int
	// blockEnd, when set, makes the rule a block rule (PEM): pattern matches the
	// block's first line, and the span runs on, over any number of lines, to
	// the end of the first match of blockEnd after it, or to the end of text
	// when there is none yet (the block is open). blockEndKeyword is a literal
	// that starts every blockEnd match, to find candidates quickly.
	blockEnd        string
	blockEndKeyword string
	// wordStart: the match starts at the start of the word that holds the
	// keyword (letters, digits, "_", ".", "-"), not at the keyword itself.
	wordStart bool
	// keyBefore: the keywords are assignment operators (":", "="); the match
	// starts at the key word before the operator (after an optional quote and
	// blanks), and keyCheck, when set, vets that key before the regular
	// expression runs.
	keyBefore bool
	keyCheck  func(key string, parts keyParts) bool
	// near, when set, is a cheap test of the text around the keyword at at,
	// run before the regular expression.
	near func(text string, at int) bool
	// maxLen bounds the text the regular expression sees after the match's
	// start (0: defaultMaxLen); multi-line rules see the rest of the text.
	maxLen int
	// accept, when set, vets a match (gitleaks' allowlists and entropy checks);
	// sub[i] is the text of group i, "" when it took no part; before is the
	// byte before the match (0 at the start of text).
	accept func(sub []string, before byte) bool
	// extend, when set, moves the end of the hidden part (to, in text) once
	// the match is accepted: start is where the match starts in text and mt
	// its submatch offsets from there. An assignment's value ends by its
	// context (values.go).
	extend func(text string, start int, mt []int, to int) int
	// glued: what is glued to the hidden token (no blank, quote or bracket
	// between: "…zWQ!4o_Nm", `…789\abcd`) is hidden with it (gluedEnd).
	glued bool
	// cues (a custom rule's): where a keyword of the rule occurs, the
	// readable views of the text are read too (views.go), as where a vendor
	// rule's keyword does: the rule's shape may be there only once escapes
	// are undone.
	cues bool
	// custom, when set, replaces pattern: it finds the span to hide around the
	// keyword at at, for a shape a forward regular expression cannot start
	// at the keyword ("value" == password).
	custom func(text string, at int) (Span, bool)
}

// ruleTable is the credential rule set. Every entry has a test table of
// positive and negative examples in rules_test.go.
var ruleTable = []ruleSpec{
	{
		name:     "private-key-pem",
		keywords: []string{"-----BEGIN"},
		// No dash in the label: "-----BEGIN … KEY----------END … KEY-----",
		// an empty block on one line, is not read as a BEGIN label that runs on.
		pattern:         `-----BEGIN[ A-Z0-9_]{0,100}PRIVATE KEY(?: BLOCK)?-----`,
		blockEnd:        `-----END[ A-Z0-9_]{0,100}PRIVATE KEY(?: BLOCK)?-----`,
		blockEndKeyword: "-----END",
	},
	{
		// Wider than gitleaks' aws-access-token (base32 [A-Z2-7]{16}, with an
		// entropy bar): any upper-case letters and digits, as detect-secrets
		// reads them, but not AWS's documentation keys (…EXAMPLE).
		name:     "aws-access-key-id",
		keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
		pattern:  `\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`,
		accept: func(sub []string, _ byte) bool {
			return !strings.HasSuffix(sub[0], "EXAMPLE") && !longRun(sub[0][4:], 6, "xX")
		},
	},
	{
		name:      "aws-secret-access-key",
		keywords:  []string{":", "="},
		keyBefore: true,
		keyCheck:  func(_ string, parts keyParts) bool { return parts&partAWS != 0 },
		pattern:   `(?i)[a-z0-9_.-]*?aws_?(?:secret_?(?:access_?)?key|sk)(?:\\?["'])?\s*(?:=|:|=>)\s*(?:\\?["'])?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`,
		hide:      []int{1},
	},
	{
		name:      "discord-webhook",
		keywords:  []string{"/api/webhooks/"},
		wordStart: true,
		pattern:   `(?i)(?:[a-z0-9-]+\.)?discord(?:app)?\.com/api/webhooks/([0-9]{5,}/[A-Za-z0-9_-]{20,})`,
		hide:      []int{1},
	},
	{
		name:      "telegram-bot-token",
		keywords:  []string{":AA"},
		wordStart: true,
		pattern:   `[0-9]{8,10}:AA[A-Za-z0-9_-]{33}\b`,
	},
	{
		name:     "groq-api-key",
		keywords: []string{"gsk_"},
		pattern:  `\bgsk_[A-Za-z0-9]{48,}\b`,
	},
	{
		name:     "xai-api-key",
		keywords: []string{"xai-"},
		pattern:  `\bxai-[A-Za-z0-9]{70,}\b`,
	},
	{
		name:      "authorization-header",
		keywords:  []string{"authorization"},
		fold:      true,
		wordStart: true,
		pattern: `(?i)[a-z0-9_.-]*?authorization(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?:` +
			`(?:bearer|basic|token|bot|digest|apikey|sso-key|negotiate)\s+([^\s"'\\,;<>]+)|([^\s"'\\,;<>]+))`,
		hide: []int{1, 2},
		accept: func(sub []string, _ byte) bool {
			if sub[1] != "" {
				return !isPlaceholderValue(sub[1]) && !strings.HasPrefix(sub[1], "{")
			}
			return !isAuthScheme(sub[2]) && len(sub[2]) >= 8 && looksRandom(sub[2]) && !isPlaceholderValue(sub[2])
		},
	},
	{
		name:     "bearer-token",
		keywords: []string{"bearer"},
		fold:     true,
		pattern:  `(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)`,
		hide:     []int{1},
		accept:   func(sub []string, _ byte) bool { return looksRandom(sub[1]) && !isPlaceholderValue(sub[1]) },
	},
	{
		// A URL's userinfo, user and password: the user part is a licence
		// key or a token as often as a name (https://cafebabe:deadbeef@gems…,
		// https://<token>@github.com); a user alone is hidden when random.
		name:      "url-userinfo",
		keywords:  []string{"://"},
		wordStart: true,
		near:      hasUserinfo,
		// A password may hold "#" (not escaped as it should be, as people write it).
		pattern: `[A-Za-z][A-Za-z0-9+.-]*://([^\s/?#@:]*:[^\s/?<>]+|[^\s/?#@:]+)@`,
		hide:    []int{1},
		accept: func(sub []string, _ byte) bool {
			user, pass, ok := strings.Cut(sub[1], ":")
			if ok {
				return !isPlaceholderValue(pass) || !isPlaceholderValue(user) && len(user) >= 16 && looksRandom(user)
			}
			return len(user) >= 16 && looksRandom(user) && !isPlaceholderValue(user)
		},
	},
	{
		// The signature or key of a signed URL, in its query: an Azure SAS
		// (sig=), S3 and GCS presigned URLs (X-Amz-Signature=,
		// X-Goog-Signature=), a chat service's webhook (?key=…&token=…; the
		// token by the assignment rule). Named by a parameter the assignment
		// rule does not read as a credential.
		name:     "url-signature",
		keywords: []string{"sig=", "signature=", "key="},
		fold:     true,
		near:     urlParamName,
		pattern:  `(?i)(?:sig|signature|key)=([^&#\s"'<>\\]+)`,
		hide:     []int{1},
		accept:   urlSecretParam,
	},
	{
		// The path of a webhook after its path word: chat services and
		// automation hosts carry the hook's secret there
		// (…/webhookb2/<id>@<id>/IncomingWebhook/<key>/<id>, /hooks/<key>).
		// A host named hooks.… (hooks.<chat>.com/services/T…/B…/…) is one.
		name:     "webhook-path",
		keywords: []string{"/hooks/", "/hook/", "/webhook/", "/webhooks/", "/webhookb2/", "hooks."},
		fold:     true,
		pattern:  `(?i)(?:/(?:hooks?|webhooks?|webhookb2)/|hooks\.[a-z0-9-]+(?:\.[a-z0-9-]+)+/)([^\s?#"'<>()\[\]\\]+)`,
		hide:     []int{1},
		accept:   webhookSecret,
	},
	{
		// A token of a vendor-style prefix and a random tail, named or not
		// (sk-proj-…, sk-svcacct-…, dckr_pat_…, odt_…, live_…, api-…):
		// the shape of the keys vendors issue, gitleaks' list or not.
		name:     "prefixed-token",
		keywords: []string{"-", "_"},
		custom:   prefixedToken,
	},
	{
		// base64 of a PEM block (LS0tLS1CRUdJT… is "-----BEGIN"), as
		// Kubernetes secrets and CI variables hold keys: hidden unless it
		// decodes to a certificate or a public key.
		name:     "pem-base64",
		keywords: []string{"LS0tLS1CRUdJT"},
		pattern:  `LS0tLS1CRUdJT[A-Za-z0-9+/=]*`,
		maxLen:   64 << 10,
		accept:   pemBase64Secret,
	},
	{
		// A token of a source host's or a payment service's own prefix
		// (GitLab's glpat-, glptt-, glcbt-, …; Square's sq0csp-, sq0atp-):
		// the prefix says what it is, so its tail is hidden whatever it
		// looks like (gitleaks wants hex or a length for some of them,
		// and a test token is as much one to a reader), unless it is a
		// mask (glpat-xxxxxxxx…).
		name: "vendor-prefix-token",
		keywords: []string{"glpat-", "glptt-", "glcbt-", "gldt-", "glrt-", "glsoat-", "glft-", "glimt-",
			"glagent-", "gloas-", "sq0csp-", "sq0atp-"},
		// The lengths are the vendors' own where they give one (glptt-: 40,
		// glimt-: 25, glagent-: 50 or more, gloas-: 64).
		pattern: `\b(gl(?:pat|cbt|dt|rt|soat|ft)-[A-Za-z0-9_-]{20,}|sq0(?:csp|atp)-[A-Za-z0-9_-]{20,}|glagent-[A-Za-z0-9_-]{50,}|` +
			`glptt-[A-Za-z0-9_-]{40}|glimt-[A-Za-z0-9_-]{25}|gloas-[A-Za-z0-9_-]{64})(?:[^A-Za-z0-9_-]|$)`,
		hide:  []int{1},
		glued: true,
		accept: func(sub []string, _ byte) bool {
			_, tail, _ := strings.Cut(sub[1], "-")
			return !isPlaceholderValue(tail)
		},
	},
	{
		// A Mailchimp key: 32 hex digits and the data centre (…-us21),
		// which says it is no hash.
		name:      "hex-datacenter-key",
		keywords:  []string{"-us"},
		wordStart: true,
		pattern:   `\b[0-9a-f]{32}-us[0-9]{1,2}\b`,
	},
	{
		name:      "secret-assignment",
		keywords:  []string{":", "="},
		keyBefore: true,
		keyCheck: func(key string, parts keyParts) bool {
			return parts&partSecretName != 0 && secretKeyClass(key) != keyNone
		},
		// Any assignment or comparison operator of the languages agents
		// write (= := ::= ?= .= => == === != !== :), a C array or size after
		// the name, a quoted value ("", '', ``, @"") or an unquoted one up to
		// white space, which may hold braces (m{{h}o)p${e]…}}).
		pattern: `(?i)([a-z0-9_.-]*(?:pass|pwd|pw|secret|token|key|auth|credential)[a-z0-9_.-]*)(?:\[\d*\])?` +
			`(?:\\?["'])?[ \t]*(?::::=|::=|:=|===|==|!==|!=|=>|\?=|\.=|=|:)[ \t]*@?` +
			`(?:\\?"((?:\\[^"]|[^"\\\r\n])*)\\?"|'([^'\r\n]*)'|` + "`([^`\\r\\n]*)`" + `|\$\{[^}\s]*\}?|` +
			"([^\\s\"'`<>,;&(){}\\[\\]=\\\\](?:[^\\s\"'`&\\\\]*[^\\s\"'`&,;\\\\])?))",
		hide:   []int{2, 3, 4, 5},
		accept: acceptAssignment,
		extend: lineValueEnd,
	},
	{
		// A credential name and a quoted literal with no operator between,
		// as a statement: password "…"; (the configuration files of DNS
		// servers, routers, Tcl).
		name:     "secret-statement",
		keywords: []string{`";`, `';`},
		custom:   quotedStatement,
		cues:     true,
	},
	{
		// A secret passed to a constructor or setter: std::string secret("…"),
		// key.assign("…"), setPassword('…') (not a getter: getPassword("user")).
		name:      "secret-call",
		keywords:  []string{`("`, "('", "(`"},
		keyBefore: true,
		keyCheck: func(key string, parts keyParts) bool {
			return parts&partSecretName != 0 && secretKeyClass(key) != keyNone && !isGetter(key)
		},
		pattern: "(?i)[a-z0-9_.-]*\\((?:\"([^\"\\r\\n]*)\"|'([^'\\r\\n]*)'|`([^`\\r\\n]*)`)",
		hide:    []int{1, 2, 3},
		accept: func(sub []string, _ byte) bool {
			v := sub[1] + sub[2] + sub[3]
			return len(v) >= minSecretLen && !isPlaceholderValue(v)
		},
	},
	{
		// A comparison with the literal first: if ("…" == password).
		name:     "secret-comparison",
		keywords: []string{"==", "!="},
		custom:   reversedComparison,
	},
	{
		// detect-secrets' Artifactory tokens (gitleaks names them only with
		// the vendor's name before them).
		name:     "artifactory-token",
		keywords: []string{"AKC", "AP"},
		pattern:  `\b(?:AKC[a-zA-Z0-9]{10,}|AP[\dABCDEF][a-zA-Z0-9]{8,})\b`,
		accept:   func(sub []string, _ byte) bool { return !longRun(sub[0], 16, "xX") }, // AKCpXXXX… of 69 X: a mask
	},
	{
		// detect-secrets' SoftLayer keys: named as such, or in the SOAP URL.
		name:      "softlayer-key",
		keywords:  []string{"softlayer", "slapi", "sl_key", "sl-key", "sl_api", "sl-api"},
		fold:      true,
		wordStart: true,
		pattern:   `(?i)[a-z0-9_.-]*(?:softlayer|sl)[_-]?(?:api)?[_-]?key["']?\s*(?:::=|:=|=|:)\s*["']?([a-z0-9]{64})\b`,
		hide:      []int{1},
	},
	{
		name:     "softlayer-url",
		keywords: []string{"api.softlayer.com/soap/"},
		fold:     true,
		pattern:  `(?i)api\.softlayer\.com/soap/v3(?:\.1)?/([a-z0-9]{64})\b`,
		hide:     []int{1},
	},
	{
		// Slack tokens of the older shapes detect-secrets knows
		// (xoxp-523423-234243-234233-e039d02840a0b9379c), shorter than gitleaks'.
		name:     "slack-token",
		keywords: []string{"xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"},
		pattern:  `\bxox[abposr]-(?:\d+-)+[a-z0-9]{16,}\b`,
	},
	{
		// A JWT of two parts (no signature) or whose signature gitleaks'
		// shape misses; its header must read as JSON.
		name:     "jwt",
		keywords: []string{"eyJ"},
		pattern:  `\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)?`,
		maxLen:   16 << 10,
		accept:   func(sub []string, _ byte) bool { return jwtHeader(sub[0]) },
	},
	{
		// A Discord bot token: a user id in base64 (17-19 digits: MT…, Nz…,
		// OT…), a timestamp, an HMAC. gitleaks wants the vendor's name before it.
		name:     "discord-bot-token",
		keywords: []string{"MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"},
		pattern:  `\b[MNO][A-Za-z0-9_-]{22,26}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}`,
	},
	{
		name:      "cli-secret-flag",
		keywords:  []string{"-pass", "-pwd", "-token", "-secret", "-key", "-api-key", "-auth"},
		fold:      true,
		wordStart: true,
		pattern: `(?i)--?(?:[a-z0-9]+-)*(?:password|passwd|pass|pwd|token|secret|api-?key|access-key|auth-token)` +
			`(?:=|\s+)("[^"]*"|'[^']*'|[^\s"'<>-][^\s"'<>]*)`,
		hide:   []int{1},
		accept: func(sub []string, _ byte) bool { return !isPlaceholderValue(strings.Trim(sub[1], `"'`)) },
	},
}

// rule is a compiled ruleSpec.
type rule struct {
	ruleSpec
	// re is the pattern anchored at the match's start: it runs once per keyword
	// found, on a short window, which is what keeps Go's regexp engine cheap.
	re *regexp.Regexp
	// boundary: the pattern starts with \b, which the anchored window cannot
	// see, so find checks the byte before the match itself.
	boundary bool
	// blockEnd is the compiled, anchored ruleSpec.blockEnd.
	blockEnd *regexp.Regexp
}

// defaultMaxLen bounds the window of a single-line rule. It is short because
// the cost of Go's backtracking matcher grows with the window, not the match;
// a hidden part that reaches the bound is extended to the end of its token.
const defaultMaxLen = 256

// compiledRules is built once when the package is initialised and never
// changed after: every CredentialMasker shares it read-only.
var compiledRules = compileRules(ruleTable)

func compileRules(specs []ruleSpec) []rule {
	if len(specs) > maxRules {
		panic("masking: more rules than maxRules") // a programming error, caught by every test run
	}
	rules := make([]rule, len(specs))
	for i, s := range specs {
		rules[i] = rule{
			ruleSpec: s,
			boundary: strings.HasPrefix(strings.TrimPrefix(s.pattern, "(?i)"), `\b`),
		}
		if s.custom == nil {
			rules[i].re = regexp.MustCompile(`^(?:` + s.pattern + `)`)
		}
		if rules[i].maxLen == 0 {
			rules[i].maxLen = defaultMaxLen
		}
		if s.blockEnd != "" {
			rules[i].blockEnd = regexp.MustCompile(`^(?:` + s.blockEnd + `)`)
		}
	}
	return rules
}

// acceptAssignment vets a `key = value` match: the key must name a secret (by
// its words, so that max_tokens and tokenizer do not) and not be one that
// gitleaks' generic rule allows by name (public_token, csrf-token); the value
// is hidden whatever it looks like unless it is plainly not a literal
// (assignedLiteral: a reference, a call, a placeholder, a label).
func acceptAssignment(sub []string, before byte) bool {
	// A backslash ends an unquoted value in JSON (`\"key\": value\"`).
	value := strings.TrimRight(sub[2]+sub[3]+sub[4]+sub[5], `\`)
	if sub[4] != "" && strings.ContainsAny(sub[4], " \t") {
		return false // `etcdctl get /secret`: a shell command's output, not a literal
	}
	rest := sub[0][len(sub[1]):]
	if sub[5] != "" && len(rest) > 1 && rest[0] == '=' && (rest[1] == ' ' || rest[1] == '\t') {
		return false // `NAME= word`: the shell's empty assignment before a command, or the next name in an env dump
	}
	if labelInString(before, rest) {
		return false // "Password:" and what follows it: a label in a string, closed right after the colon
	}
	class := secretKeyClass(sub[1])
	if class == keyNone || genericAllowsName(sub[0]) {
		return false
	}
	return assignedLiteral(sub[1], value, sub[5] == "", class)
}

// labelInString reports a key that a quote opens (before) and that the same
// quote closes right after its colon ("Password:", \"Password:\" in JSON):
// the text of a label, not a name given a value.
func labelInString(before byte, rest string) bool {
	if len(rest) < 2 || rest[0] != ':' {
		return false
	}
	closer := rest[1]
	if closer == '\\' && len(rest) > 2 {
		closer = rest[2] // an escaped quote, in JSON
	}
	return (closer == '"' || closer == '\'') && (before == closer || before == '\\')
}

// isGetter reports a key that reads a secret rather than sets one
// (getPassword, os.getenv, readToken).
func isGetter(key string) bool {
	var buf [8]string
	words := keyWords(key, buf[:0])
	for _, w := range words {
		switch w {
		case "get", "getenv", "read", "load", "fetch", "lookup", "find", "has", "is", "check", "validate", "verify", "env", "environ":
			return true
		}
	}
	return false
}

// reversedComparison hides the literal of a comparison whose other side
// names a secret: "…" == password, '…' != api_key.
func reversedComparison(text string, at int) (Span, bool) {
	j := at + 2
	if j < len(text) && text[j] == '=' {
		j++
	}
	for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	k := j
	for k < len(text) && isKeyByte(text[k]) {
		k++
	}
	if k == j || secretKeyClass(text[j:k]) == keyNone {
		return Span{}, false
	}
	e := at
	for e > 0 && (text[e-1] == ' ' || text[e-1] == '\t') {
		e--
	}
	if e == 0 || (text[e-1] != '"' && text[e-1] != '\'') {
		return Span{}, false
	}
	q := text[e-1]
	lineStart := strings.LastIndexByte(text[:e-1], '\n') + 1
	open := strings.LastIndexByte(text[lineStart:e-1], q)
	if open < 0 {
		return Span{}, false
	}
	from, to := lineStart+open+1, e-1
	if v := text[from:to]; len(v) < minSecretLen || isPlaceholderValue(v) {
		return Span{}, false
	}
	return Span{Start: from, End: to, Placeholder: SecretPlaceholder}, true
}

// jwtHeader reports whether a JWT's first part decodes to a JSON object.
func jwtHeader(token string) bool {
	head, _, _ := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(head, "="))
	return err == nil && json.Valid(b) && len(b) > 0 && b[0] == '{'
}

func plainToken(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; !isWordByte(b) && b != '.' && b != '=' && b != '-' && b != '+' && b != '/' {
			return false
		}
	}
	return true
}

// minSecretLen: a value shorter than this (PuttyPassword=0) is a setting.
const minSecretLen = 3

// genericAllowsName applies the allow-lists of gitleaks' generic-api-key
// rule that read the name (regexes on the match or the line: public_token,
// csrf-token, keyVaultToStoreSecrets), the scanner's own word on what a
// `name = value` that is not a secret looks like. Its allow-lists on the
// value (words, stop words) are not applied: a credential name hides its
// value whatever the value looks like (spec §8).
func genericAllowsName(match string) bool {
	vr, err := vendorRulesOnce()
	if err != nil || vr.generic == nil {
		return false
	}
	for _, a := range vr.generic.allow {
		if a.MatchCondition != config.AllowlistMatchOr || len(a.Commits)+len(a.Paths) > 0 {
			continue
		}
		if (a.RegexTarget == "match" || a.RegexTarget == "line") && a.RegexAllowed(match) {
			return true
		}
	}
	return false
}

type keyClass int

const (
	keyNone     keyClass = iota
	keyPassword          // any value is a secret
	keyPwd               // a password, unless the value is a path (PWD)
	keyToken             // a secret when the value looks random
)

// notSecretLast are last key words that say the value is about a secret, not
// the secret itself (token_type, password_file, api_key_name).
var notSecretLast = map[string]bool{
	"url": true, "uri": true, "endpoint": true, "type": true, "expires": true, "expiry": true,
	"expiration": true, "count": true, "limit": true, "max": true, "min": true, "id": true,
	"name": true, "file": true, "path": true, "dir": true, "length": true, "len": true,
	"size": true, "usage": true, "used": true, "enabled": true, "required": true, "method": true,
	"header": true, "prefix": true, "field": true, "env": true, "var": true, "hint": true,
	"policy": true, "rotation": true, "ttl": true, "format": true, "mode": true, "set": true,
	"variable": true, "param": true, "ref": true, "store": true,
	// A name for what is shown about a secret in a user interface or a
	// check: passwordLabel: "Password:", tokenPattern = "^[a-z]+$".
	"label": true, "placeholder": true, "title": true, "text": true, "message": true, "msg": true,
	"prompt": true, "description": true, "desc": true, "selector": true, "input": true, "button": true,
	"icon": true, "regex": true, "pattern": true, "error": true, "strength": true, "visible": true,
	"visibility": true, "toggle": true,
}

// secretKeyWords are key words that name a secret on their own; secretKeyPairs
// are two adjacent words that do (api key, access key).
var (
	secretKeyWords = map[string]keyClass{
		"password": keyPassword, "passwd": keyPassword, "passphrase": keyPassword, "pwd": keyPwd, "pw": keyPwd,
		"secrete": keyToken,
		"secret":  keyToken, "secrets": keyToken, "token": keyToken, "auth": keyToken,
		"credential": keyToken, "credentials": keyToken, "apikey": keyToken, "accesskey": keyToken,
		"secretkey": keyToken, "privatekey": keyToken, "accountkey": keyToken,
		"clientsecret": keyToken, "accesstoken": keyToken, "refreshtoken": keyToken,
		"authtoken": keyToken, "sessiontoken": keyToken, "apitoken": keyToken,
	}
	secretKeyPairs = map[[2]string]bool{
		{"api", "key"}: true, {"access", "key"}: true, {"private", "key"}: true,
		{"account", "key"}: true, {"session", "key"}: true, {"signing", "key"}: true,
		{"encryption", "key"}: true, {"master", "key"}: true, {"shared", "key"}: true,
	}
)

// secretKeyClass tells whether a key (DB_PASSWORD, apiKey, x-api-key) names a secret.
func secretKeyClass(key string) keyClass {
	var buf [8]string
	words := keyWords(key, buf[:0])
	if len(words) == 0 || notSecretLast[words[len(words)-1]] {
		return keyNone
	}
	best := keyNone
	for i, w := range words {
		c, ok := secretKeyWords[w]
		switch {
		case ok:
		case strings.Contains(w, "password") || strings.Contains(w, "passwd"):
			c = keyPassword // dbpassword, mysqlpasswd
		case w == "pass" && len(words) > 1:
			c = keyPassword // db_pass, but not "--- PASS: TestX"
		case i > 0 && secretKeyPairs[[2]string{words[i-1], w}]:
			c = keyToken
		default:
			continue
		}
		if c == keyPwd && len(words) > 1 {
			c = keyPassword // db_pwd
		}
		if best == keyNone || c < best {
			best = c
		}
	}
	return best
}

// keyWords appends to words the lower-case words of key, split at separators
// and at case changes (APIKey -> api, key; dbPassword -> db, password).
func keyWords(key string, words []string) []string {
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(key[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(key); i++ {
		b := key[i]
		if !isAlnum(b) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := key[i-1]
		upper := b >= 'A' && b <= 'Z'
		if upper && prev >= 'a' && prev <= 'z' ||
			upper && prev >= 'A' && prev <= 'Z' && i+1 < len(key) && key[i+1] >= 'a' && key[i+1] <= 'z' {
			flush(i)
			start = i
		}
	}
	flush(len(key))
	return words
}

// keyParts is the set of name parts a key holds, read in one pass at each
// assignment operator and shared by the rules that look at keys.
type keyParts uint8

const (
	partSecretName keyParts = 1 << iota // pass, pwd, secret, token, key, auth, credential
	partAWS                             // aws
)

// partsOf reads the parts of key: one pass, no allocation, since it runs at
// every ":" and "=" of the text.
func partsOf(key string) keyParts {
	var parts keyParts
	for i := 0; i < len(key); i++ {
		rest := key[i:]
		switch key[i] | 0x20 {
		case 'p':
			if hasKeyword(rest, "pass", true) || hasKeyword(rest, "pw", true) {
				parts |= partSecretName
			}
		case 's':
			if hasKeyword(rest, "secret", true) {
				parts |= partSecretName
			}
		case 't':
			if hasKeyword(rest, "token", true) {
				parts |= partSecretName
			}
		case 'k':
			if hasKeyword(rest, "key", true) {
				parts |= partSecretName
			}
		case 'a':
			if hasKeyword(rest, "auth", true) {
				parts |= partSecretName
			} else if hasKeyword(rest, "aws", true) {
				parts |= partAWS
			}
		case 'c':
			if hasKeyword(rest, "credential", true) {
				parts |= partSecretName
			}
		}
	}
	return parts
}

// hasUserinfo reports whether the URL whose "://" is at at has a "user:pass@"
// part: an "@" before the host ends.
func hasUserinfo(text string, at int) bool {
	for j := at + 3; j < len(text); j++ {
		switch text[j] {
		case '@':
			return true
		case '/', '?', ' ', '\t', '\n', '\r', '"', '\'', '<', '>':
			return false // "#" goes on: a password may hold one
		}
	}
	return false
}

// isPlaceholderValue reports values that are not secrets but stand for one: empty,
// null-like, a variable reference, a template, a mask (****), or a placeholder
// such as <secret> (which keeps masking idempotent), as gitleaks' global
// allow-list reads them and as people write them (xxxx, your_token_here,
// changeme, …EXAMPLE, an ENV_NAME, var.db_password).
func isPlaceholderValue(v string) bool {
	if v == "" || strings.HasPrefix(v, "<") || strings.HasPrefix(v, "${") || strings.HasPrefix(v, "{{") ||
		strings.HasPrefix(v, "%(") || strings.HasPrefix(v, "$(") || strings.HasPrefix(v, "`") {
		return true
	}
	// gitleaks' global allow-list, its regexes only: its stop words
	// ("abcdefghijklmnopqrstuvwxyz") are no reason to show a value a
	// credential name announces.
	if vr, err := vendorRulesOnce(); err == nil && globalRegexAllows(vr.global, v) {
		return true
	}
	lower := strings.ToLower(v)
	for _, w := range placeholderWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	if longRun(v, 5, "xX*.#") || longRun(v, 8, "") || isEnvReference(v) {
		return true
	}
	switch strings.ToLower(v) {
	case "null", "none", "nil", "true", "false", "undefined", "empty", "required", "optional", "redacted", "hidden":
		return true
	}
	if v[0] == '$' && len(v) > 1 && isEnvName(v[1:]) {
		return true
	}
	return strings.Count(v, v[:1]) == len(v) && (v[0] == '*' || v[0] == 'x' || v[0] == 'X' || v[0] == '.')
}

// globalRegexAllows reports whether one of the regexes of the global
// allow-lists allows v whole ($VAR, ${VAR}, {{ x }}, %VAR%, @VAR@, a path
// under /home): those are written as whole-value patterns, and one of them
// ((?i)^true|false|null$) would allow any value that only holds "false".
func globalRegexAllows(lists []*config.Allowlist, v string) bool {
	for _, a := range lists {
		if a.MatchCondition != config.AllowlistMatchOr {
			continue
		}
		for _, re := range a.Regexes {
			if loc := re.FindStringIndex(v); loc != nil && loc[0] == 0 && loc[1] == len(v) {
				return true
			}
		}
	}
	return false
}

// placeholderWords, in a value, say it stands for a secret.
var placeholderWords = []string{
	"example", "placeholder", "your_", "your-", "yourtoken", "yourkey", "_here", "-here", "changeme",
	"change_me", "dummy", "fake", "sample", "redacted", "insert_", "replace_me", "xxxx",
}

// longRun reports a run of at least n of one byte (of those in set, or any
// byte when set is empty) in s: a mask (xxxxx, *****) or a made-up value
// (1111111111), not a generated one.
func longRun(s string, n int, set string) bool {
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if j-i >= n && (set == "" || strings.IndexByte(set, s[i]) >= 0) {
			return true
		}
		i = j
	}
	return false
}

// isEnvReference reports a value that names where the secret is rather than
// holding it: an environment variable's name (ACCESS_TOKEN) or a dotted
// reference (var.db_password, process.env.TOKEN).
func isEnvReference(v string) bool {
	upper, under := true, false
	for i := 0; i < len(v); i++ {
		b := v[i]
		under = under || b == '_'
		if !(b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_') {
			upper = false
		}
	}
	if upper && under && v[0] >= 'A' && v[0] <= 'Z' {
		return true
	}
	dots := strings.Count(v, ".")
	if dots == 0 || strings.ContainsAny(v, "-/+=") {
		return false
	}
	for _, part := range strings.Split(v, ".") {
		if part == "" || !isEnvName(part) || part[0] >= '0' && part[0] <= '9' || hasDigit(part) && len(part) > 12 {
			return false
		}
	}
	return true
}

func isEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}

func isAuthScheme(v string) bool {
	switch strings.ToLower(v) {
	case "bearer", "basic", "token", "bot", "digest", "apikey", "sso-key", "negotiate":
		return true
	}
	return false
}

// classes counts the character classes (lower, upper, digit, other) in s: a
// random token has several, a word or a number one.
func classes(s string) int {
	var lower, upper, digit, other int
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b >= 'a' && b <= 'z':
			lower = 1
		case b >= 'A' && b <= 'Z':
			upper = 1
		case b >= '0' && b <= '9':
			digit = 1
		default:
			other = 1
		}
	}
	return lower + upper + digit + other
}

// looksRandom tells a generated token from words: it has a digit and letters,
// or three character classes.
func looksRandom(s string) bool {
	c := classes(s)
	return c >= 3 || c >= 2 && hasDigit(s)
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
