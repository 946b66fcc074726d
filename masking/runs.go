package masking

import (
	"encoding/base64"
	"strings"
)

// runs.go finds secrets in long runs of token bytes that no keyword
// announces, wherever they stand in a text:
//   - base64 whose decoded text holds a secret. The decoded text is read by
//     every credential rule (gitleaks' and runls' own, base64 in it too), so
//     a token is found whatever its prefix and wherever it stands in what was
//     encoded: a docker config's auth ("user:glpat-…"), a CI variable that
//     holds an env file, a Kubernetes secret's data. Base64 of prose, of a
//     hash or of an image decodes to nothing a rule finds, and stays.
//   - a token of three dot-separated parts, id.timestamp.signature, whose
//     first and last parts are random (Discord's bot tokens, whatever
//     letter their first part starts with).
//
// Runs are letters, digits and "+": base64 of ASCII text holds "/" (or
// "-", "_" URL-safe) only where what was encoded holds "?", ">" or "~",
// and then at the end of a group of four, so a run still starts a group;
// the span hidden takes in the whole base64 around it. The parts of a
// dotted token are random base64url: its head (base64 of a user id, digits)
// is a run, and its middle and tail are read from there. Paths, kebab-case
// names and ids joined by "-" are not runs, which keeps runs rare in
// ordinary text. They are found by probing: a run of at least minRun bytes
// holds a byte at every minRun-th offset, so the probe reads one byte in
// minRun and, where that is a run byte, the word around it. A run is
// decoded only when the first of every four characters, from one of the
// four alignments, is one base64 starts three ASCII bytes with (A-Z, a-f):
// hex, words and random tokens fail that within a few groups.

const (
	// minRun is the shortest run read: base64 of 18 bytes (`password=…`).
	minRun = 24
	// maxDecode bounds the characters of a run decoded (a longer run is
	// read this far: a file's base64, whose secret is then hidden with it).
	maxDecode = 8 << 10
	// maxDecodeDepth bounds base64 in base64 (a docker config in a
	// Kubernetes secret).
	maxDecodeDepth = 2
	// Bounds of a dotted token's parts: a user id in base64 (17-20 digits),
	// a timestamp of six characters, an HMAC of 27 or more.
	minDottedHead, maxDottedHead, dottedMiddle, minDottedTail = 20, 40, 6, 27
)

// runByte marks the bytes of a run: letters, digits and "+".
var runByte = func() (t [256]bool) {
	for b := range t {
		t[b] = isAlnum(byte(b)) || b == '+'
	}
	return t
}()

// runSecrets appends the spans of the secrets in the long runs of text;
// depth is how many decodings of base64 text is inside.
func (m *CredentialMasker) runSecrets(text string, out []Span, depth int) []Span {
	forEachRun(text, func(lo, hi int) {
		if s, ok := dottedToken(text, lo, hi); ok {
			out = append(out, s)
		} else if end, ok := m.base64Secret(text, lo, hi, depth); ok {
			for lo > 0 && isBase64Byte(text[lo-1]) {
				lo-- // and before one
			}
			out = append(out, Span{Start: lo, End: end, Placeholder: SecretPlaceholder})
		}
	})
	return out
}

// forEachRun calls fn with each maximal run of minRun run bytes or more in
// text, in order, by the probe.
func forEachRun(text string, fn func(lo, hi int)) {
	for p := minRun - 1; p < len(text); {
		if !runByte[text[p]] {
			p += minRun
			continue
		}
		lo, hi := p, p+1
		for lo > 0 && runByte[text[lo-1]] {
			lo--
		}
		for hi < len(text) && runByte[text[hi]] {
			hi++
		}
		if hi-lo >= minRun {
			fn(lo, hi)
		}
		p = hi + minRun // text[hi] is no run byte: the next run starts after it
	}
}

// base64Secret reports whether the run text[lo:hi] is base64 of text in
// which a credential rule finds a secret, and where the run ends with its
// padding.
func (m *CredentialMasker) base64Secret(text string, lo, hi, depth int) (int, bool) {
	if depth >= maxDecodeDepth {
		return 0, false
	}
	run := text[lo:hi]
	for a := 0; a < 4 && len(run)-a >= minRun; a++ {
		if !asciiGroups(run[a:]) {
			continue
		}
		dec, ok := decodeRun(run[a:])
		if dec, ok = printableTail(dec, ok); !ok {
			continue
		}
		if !m.holdsSecret(dec, depth+1) {
			return 0, false // text at this alignment: no other one decodes to text too
		}
		end := hi
		for end < len(text) && isBase64Byte(text[end]) {
			end++ // base64 goes on after a "/", "-" or "_"
		}
		for pad := 0; pad < 2 && end < len(text) && text[end] == '='; pad++ {
			end++
		}
		return end, true
	}
	return 0, false
}

// asciiGroups reports whether the first character of each group of four in
// s (as far as maxDecode) is one base64 gives a byte below 128: A-Z, a-f.
func asciiGroups(s string) bool {
	for k := 0; k < len(s) && k < maxDecode; k += 4 {
		if c := s[k]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// decodeRun decodes the first maxDecode characters of a run of base64,
// standard or URL-safe (not both), without its padding.
func decodeRun(s string) (string, bool) {
	n := min(len(s), maxDecode)
	if n%4 == 1 {
		n-- // a lone last character holds no whole byte
	}
	s = s[:n]
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		if strings.ContainsAny(s, "+/") {
			return "", false
		}
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(s)
	return string(b), err == nil
}

// printableTail returns the decoded text less the bytes that a word glued
// before the base64 decodes to ("Basic" before the run: up to three groups
// of four), when the rest is printableASCII and holds a token's length.
func printableTail(dec string, ok bool) (string, bool) {
	if !ok {
		return "", false
	}
	skip := 0
	for i := 0; i < len(dec) && i < 9; i++ {
		if b := dec[i]; b < 0x20 || b > 0x7e {
			skip = i + 1
		}
	}
	dec = dec[skip:]
	return dec, len(dec) >= 8 && printableASCII(dec)
}

// printableASCII reports text of printable ASCII and line white space:
// what secrets and the files that hold them are written in.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; (b < 0x20 || b > 0x7e) && b != '\n' && b != '\r' && b != '\t' {
			return false
		}
	}
	return true
}

// holdsSecret reports whether a credential rule finds a secret in text.
func (m *CredentialMasker) holdsSecret(text string, depth int) bool {
	spans, _ := m.scanAll(text, nil, nil, depth)
	return len(spans) > 0
}

// dottedToken finds a token of three dot-separated parts around the run
// text[lo:hi], which is its first or its last part: head.middle.tail with
// a head of minDottedHead to maxDottedHead characters, a middle of
// dottedMiddle, a tail of minDottedTail or more, head and tail both holding
// lower case, upper case and digits. What is glued to the tail is hidden
// with it.
func dottedToken(text string, lo, hi int) (Span, bool) {
	// The part the run is in: base64url, so "-" and "_" too.
	for lo > 0 && isTokenByte(text[lo-1]) {
		lo--
	}
	for hi < len(text) && isTokenByte(text[hi]) {
		hi++
	}
	var headLo, headHi, tailLo, tailHi int
	switch {
	case dottedMiddleAt(text, hi):
		headLo, headHi = lo, hi
		tailLo = hi + dottedMiddle + 2
		tailHi = tailLo
		for tailHi < len(text) && isTokenByte(text[tailHi]) {
			tailHi++
		}
	case lo >= dottedMiddle+2 && dottedMiddleAt(text, lo-dottedMiddle-2):
		tailLo, tailHi = lo, hi
		headHi = lo - dottedMiddle - 2
		headLo = headHi
		for headLo > 0 && isTokenByte(text[headLo-1]) {
			headLo--
		}
	default:
		return Span{}, false
	}
	head, tail := text[headLo:headHi], text[tailLo:tailHi]
	if len(head) < minDottedHead || len(head) > maxDottedHead || len(tail) < minDottedTail ||
		!threeClasses(head) || !threeClasses(tail) || strings.ContainsAny(head+tail, "+/") {
		return Span{}, false
	}
	if headLo > 0 && (isTokenByte(text[headLo-1]) || text[headLo-1] == '.') {
		return Span{}, false // part of a longer dotted name
	}
	return Span{Start: headLo, End: gluedEnd(text, tailHi), Placeholder: SecretPlaceholder}, true
}

// dottedMiddleAt reports ".xxxxxx." at i: a dot, dottedMiddle token bytes, a dot.
func dottedMiddleAt(text string, i int) bool {
	if i+dottedMiddle+1 >= len(text) || text[i] != '.' || text[i+dottedMiddle+1] != '.' {
		return false
	}
	for k := i + 1; k <= i+dottedMiddle; k++ {
		if !isTokenByte(text[k]) {
			return false
		}
	}
	return true
}

// threeClasses reports a string that holds lower case, upper case and digits.
func threeClasses(s string) bool {
	var lower, upper, digit bool
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b >= 'a' && b <= 'z':
			lower = true
		case b >= 'A' && b <= 'Z':
			upper = true
		case b >= '0' && b <= '9':
			digit = true
		}
	}
	return lower && upper && digit
}
