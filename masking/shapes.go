package masking

import (
	"encoding/base64"
	"strings"
)

// shapes.go holds the tests of runls' rules for secrets found by their
// shape rather than by a vendor's name: a token of a vendor-style prefix and
// a long random tail (sk-proj-…, dckr_pat_…), the secret parts of a URL
// (signature query parameters, webhook paths), and base64 that decodes to a
// PEM key. gitleaks lists vendors one by one; these close the shapes its
// list lacks, so that a vendor it does not know yet is hidden too.

// Bounds of a prefixed token (prefixedToken).
const (
	maxTokenPrefix = 12  // "svcacct", "dckr": a vendor's prefix word is short
	maxTokenLen    = 512 // a token longer than this is hidden to this length, then to its end
	// minNamedTail: a tail after a prefix that says "secret" (sk, pat, key,
	// token, …); minTail: after any other prefix. Ids that agents' logs are
	// full of (call_…, msg_01…, toolu_01…, chatcmpl-…) have tails of 22 to 29
	// random characters and a prefix that says what they name, not a secret.
	minNamedTail = 20
	minTail      = 32
)

// prefixedToken hides a token of the shape `prefix[-_]tail` (and up to two
// more short words before the tail: sk-proj-, dckr_pat_, sk_live_) whose
// tail is random (randomTail): the shape of the API keys vendors issue,
// whether gitleaks lists the vendor or not. It runs at each "-" and "_" and
// reads only the token whose first separator that is.
func prefixedToken(text string, at int) (Span, bool) {
	s := at
	for s > 0 && at-s <= maxTokenPrefix && isAlnum(text[s-1]) {
		s--
	}
	if at-s < 2 || at-s > maxTokenPrefix || !isASCIILetter(text[s]) {
		return Span{}, false
	}
	if s > 0 && (isTokenByte(text[s-1]) || text[s-1] == '.') {
		return Span{}, false // not the token's first separator, or a word's middle
	}
	e := at + 1
	for e < len(text) && e-at <= maxTokenLen && isTokenByte(text[e]) {
		e++
	}
	if e-at-1 < minNamedTail {
		return Span{}, false
	}
	if publicPrefix(text[s:at]) {
		return Span{}, false
	}
	named := secretPrefixWord(text[s:at])
	t := at + 1
	for n := 0; n < 2; n++ {
		k := t
		for k < e && text[k] >= 'a' && text[k] <= 'z' {
			k++
		}
		if k == e || k-t < 2 || k-t > 10 || text[k] != '-' && text[k] != '_' || e-k-1 < minNamedTail {
			break
		}
		named = named || secretPrefixWord(text[t:k])
		t = k + 1
	}
	if hashPrefix(text[s:at]) {
		return Span{}, false
	}
	if n := e - at - 1; n < minTail && !(named && n >= minNamedTail) || !randomTail(text[t:e]) {
		return Span{}, false
	}
	for e < len(text) && !tokenStop[text[e]] && isTokenByte(text[e]) {
		e++
	}
	return Span{Start: s, End: e, Placeholder: SecretPlaceholder}, true
}

// secretPrefixWord reports a prefix word that says the token is a secret:
// a (restricted) secret key, a personal access token, a key, a token, a
// service account's, a live or test key.
func secretPrefixWord(w string) bool {
	switch strings.ToLower(w) {
	case "sk", "rk", "pat", "key", "keys", "token", "tok", "secret", "sec", "api", "apikey", "auth",
		"live", "test", "prod", "pass", "pwd", "cred", "svcacct", "sa", "access", "priv", "private", "bot":
		return true
	}
	return false
}

// publicPrefix reports a prefix that says the key is meant to be public
// (pk_live_…, a publishable key, is put in web pages).
func publicPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "pk", "pub", "public":
		return true
	}
	return false
}

// hashPrefix reports a prefix that names a digest (sha512-…, the integrity
// of a package lock): a hash, whatever its tail looks like.
func hashPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "sha1", "sha224", "sha256", "sha384", "sha512", "md5", "blake2b", "blake3", "xxh64", "crc32", "sha", "hash", "digest":
		return true
	}
	return false
}

func isTokenByte(b byte) bool { return isAlnum(b) || b == '_' || b == '-' }

func alnumCount(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if isAlnum(s[i]) {
			n++
		}
	}
	return n
}

// randomTail reports whether a token's tail is generated rather than
// written: letters and digits, not only hex (a hash, a SHA, a UUID), few
// separators, and cut into short runs: a generated string changes between lower case,
// upper case and digits every two or three characters (a mean run of 1.7
// in base62, 2.5 in lower case and digits), a name every five or more
// (TestMaskingHides2Paths, build_20261021_final).
func randomTail(tail string) bool {
	var runs, digitRuns, n, letters, digits, seps int
	upper := false
	hex := true
	prev := byte(0)
	for i := 0; i < len(tail); i++ {
		b := tail[i]
		var c byte
		switch {
		case b >= 'a' && b <= 'z':
			c = 'a'
		case b >= 'A' && b <= 'Z':
			c = 'A'
		case b >= '0' && b <= '9':
			c = '0'
		default:
			seps++
			continue // a separator: runs go on across it
		}
		n++
		if c == '0' {
			digits++
		} else {
			letters++
			hex = hex && (b|0x20) <= 'f'
		}
		if c != prev {
			runs++
			if c == '0' {
				digitRuns++
			}
			prev = c
		}
		upper = upper || c == 'A'
	}
	// A name cut into many words by separators is a file's or a build's
	// (R21A-A-V010SP13RC-CN-B_250K-Release-OTA-…); base64url has a
	// separator in 32 characters.
	if n == 0 || letters == 0 || digits == 0 || hex || seps*10 > n || shortSegments(tail) >= 3 {
		return false
	}
	if shannonEntropy(tail) < 3.3 {
		return false
	}
	if !upper {
		// Lower case and digits: a name keeps its digits together
		// (build20261021final), a generated string scatters them.
		return digitRuns >= 3 && float64(n)/float64(runs) <= 6
	}
	return runs >= 6 && float64(n)/float64(runs) <= 3.5 && 2*camelWordBytes(tail) < n
}

// shortSegments counts the parts of one to three characters between
// separators (…-CN-B_250K-…): a name's words and codes, where base64url
// has a separator in 32 characters.
func shortSegments(tail string) int {
	short, seg := 0, 0
	for i := 0; i <= len(tail); i++ {
		if i < len(tail) && tail[i] != '-' && tail[i] != '_' {
			seg++
			continue
		}
		if seg > 0 && seg < 4 && i < len(tail) {
			short++
		}
		seg = 0
	}
	return short
}

// camelWordBytes counts the bytes of the capitalised words in s (an upper
// case letter and three lower case or more: SponsoredProductsRemote…): a
// name written in camel case is mostly such words, a generated string
// seldom has one.
func camelWordBytes(s string) int {
	total := 0
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
			j++
		}
		if j-i >= 4 {
			total += j - i
		}
		i = j - 1
	}
	return total
}

// urlParamName reports whether the keyword at at is (the end of) a query
// parameter's name: the name starts right after "?", "&" or ";".
func urlParamName(text string, at int) bool {
	k := at
	for k > 0 && at-k < 40 && (isWordByte(text[k-1]) || text[k-1] == '-' || text[k-1] == '.') {
		k--
	}
	return k > 0 && (text[k-1] == '?' || text[k-1] == '&' || text[k-1] == ';')
}

// urlSecretParam vets the value of a signature or key query parameter: a
// placeholder, or a value too short to sign anything, stays.
func urlSecretParam(sub []string, _ byte) bool {
	return len(sub[1]) >= 8 && !isPlaceholderValue(sub[1])
}

// webhookSecret vets the path after a webhook's path word: it carries the
// hook's secret when it holds 16 letters and digits or more, with both
// (a repository's hook number, /hooks/12345, does not).
func webhookSecret(sub []string, _ byte) bool {
	p := sub[1]
	return alnumCount(p) >= 16 && hasDigit(p) && strings.IndexFunc(p, func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}) >= 0
}

// pemBase64Secret reports whether a base64 run that starts as "-----BEGIN"
// does decodes to a PEM block other than public material (a certificate
// or a public key): a private key, encrypted or not, or a type not known.
func pemBase64Secret(sub []string, _ byte) bool {
	head := sub[0][:min(len(sub[0]), 96)&^3]
	b, err := base64.StdEncoding.DecodeString(head)
	if err != nil {
		return true // not a whole run of base64: hidden, as what it may be
	}
	d := string(b)
	line, _, _ := strings.Cut(d, "\n")
	return strings.Contains(line, "PRIVATE") || !strings.Contains(line, "CERTIFICATE") && !strings.Contains(line, "PUBLIC")
}

func isBase64Byte(b byte) bool { return isAlnum(b) || b == '+' || b == '/' || b == '-' || b == '_' }
