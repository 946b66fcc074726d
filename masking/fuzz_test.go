package masking

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// FuzzMask checks, on any text, what the engine relies on: masking never
// panics; spans are sorted, non-overlapping, non-empty and within the text;
// open is -1 or the start of a span that runs to the end of text; masking is
// idempotent; the mapping is monotonic, within bounds, and maps placeholders
// onto what they hide. Seeds are in testdata/fuzz/FuzzMask (run by go test).
func FuzzMask(f *testing.F) {
	for _, cases := range ruleCases {
		for _, c := range cases {
			f.Add(c.in)
		}
	}
	f.Add(pemBlock[:len(pemBlock)/2])
	f.Add(words + "\n" + imageB64 + "\n" + uuid + " " + commitHash)
	// Values that end by their context, base64 runs, dotted tokens (values.go, runs.go).
	f.Add("db:\n  password: correct horse # c\n- secret: Zq1 b ;x\nexport TOKEN=Zq1 y\r\nmysql --password a b")
	f.Add("GH_B64=" + base64.StdEncoding.EncodeToString([]byte("export GITHUB_TOKEN="+ghp+"\n")) + "== tail")
	f.Add("bot MTAyOTQ4MTN5OTU5MTDwMEcxNg.YjESug.UNf-1GhsIG8zWT409q2C7Bh_zWQ!4o_NmQWUMs, then")
	maskers := map[string]Masker{
		"hidingOutside": HidingOutside("/runs/r1"),
		"paths":         NewPathRedactor("/runs/r1"),
		"credentials":   NewCredentialMasker(),
	}
	f.Fuzz(func(t *testing.T, text string) {
		for name, m := range maskers {
			spans, open := m.Mask(text)
			prev := 0
			for i, s := range spans {
				if s.Start < prev || s.End <= s.Start || s.End > len(text) {
					t.Fatalf("%s: span %d %+v is out of order, empty or out of bounds (len %d) in %q", name, i, s, len(text), text)
				}
				if s.Placeholder != PathPlaceholder && s.Placeholder != SecretPlaceholder {
					t.Fatalf("%s: span %+v has an unknown placeholder", name, s)
				}
				prev = s.End
			}
			if open != -1 {
				ok := false
				for _, s := range spans {
					ok = ok || s.Start == open && s.End == len(text)
				}
				if !ok {
					t.Fatalf("%s: open = %d is not the start of a span to the end of text; spans %v", name, open, spans)
				}
			}
			masked, mp := Apply(text, spans)
			checkMapping(t, text, masked, spans, mp)
			if again, _ := m.Mask(masked); len(again) != 0 {
				t.Fatalf("%s: not idempotent: masking %q (from %q) again finds %v", name, masked, text, again)
			}
			if name != "paths" && len(spans) == 0 && isPEMHeader(text) && !shortKeyBlock(text) {
				t.Fatalf("%s: a PEM header in %q is not hidden", name, text)
			}
		}
	})
}

// isPEMHeader reports whether text holds a well-formed private key BEGIN line.
func isPEMHeader(text string) bool {
	i := strings.Index(text, "-----BEGIN")
	if i < 0 {
		return false
	}
	rest := text[i+len("-----BEGIN"):]
	j := strings.Index(rest, "PRIVATE KEY-----")
	if j < 0 || j > 100 {
		return false
	}
	for k := 0; k < j; k++ {
		b := rest[k]
		if !(b == ' ' || b == '_' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9') {
			return false
		}
	}
	return true
}

// shortKeyBlock reports a key block closed after less than minKeyBody of body
// (an example such as "…KEY-----\nanything\n-----END…"), which is left as written.
func shortKeyBlock(text string) bool {
	i := strings.Index(text, "-----BEGIN")
	j := strings.Index(text[i:], "PRIVATE KEY-----")
	if j < 0 {
		return false
	}
	body := text[i+j+len("PRIVATE KEY-----"):]
	k := strings.Index(body, "-----END")
	return k >= 0 && bodyBytes(body[:k]) < minKeyBody
}

// FuzzPrefixedToken checks the prefixed-token scanner at every separator of
// any text: it never panics, and a span it returns holds the separator it
// ran at, lies within the text, starts a token (a letter after no token
// byte) and ends where the token does.
func FuzzPrefixedToken(f *testing.F) {
	for _, c := range ruleCases["prefixed-token"] {
		f.Add(c.in)
	}
	f.Add("x sk-" + strings.Repeat("aB3", 20) + "-_-")
	f.Fuzz(func(t *testing.T, text string) {
		for at := 0; at < len(text); at++ {
			if text[at] != '-' && text[at] != '_' {
				continue
			}
			sp, ok := prefixedToken(text, at)
			if !ok {
				continue
			}
			if sp.Start < 0 || sp.End > len(text) || sp.Start >= at || sp.End <= at {
				t.Fatalf("span %+v for the separator at %d of %q", sp, at, text)
			}
			if !isASCIILetter(text[sp.Start]) || sp.Start > 0 && isTokenByte(text[sp.Start-1]) {
				t.Fatalf("span %+v of %q does not start a token", sp, text)
			}
			if sp.End < len(text) && isTokenByte(text[sp.End]) {
				t.Fatalf("span %+v of %q ends inside a token", sp, text)
			}
		}
	})
}

// FuzzAssignedLiteral checks the reading of an assigned value on any value:
// it never panics, and a placeholder (a value of several words: its first
// word) or a value too short is never a literal.
func FuzzAssignedLiteral(f *testing.F) {
	for _, v := range []string{"zqxtokenvalue789", "getPassword()", "Password:", "#add-password", "${X}", "api-key", "this.token", "string"} {
		f.Add("api_key", v, true)
		f.Add("password", v, false)
	}
	f.Fuzz(func(t *testing.T, key, value string, quoted bool) {
		class := secretKeyClass(key)
		lit := assignedLiteral(key, value, quoted, class)
		first := value
		if i := strings.IndexAny(value, " \t"); !quoted && i >= 0 {
			first = value[:i] // a value of several words: its first word says
		}
		if lit && (len(value) < minSecretLen || isPlaceholderValue(first)) {
			t.Fatalf("assignedLiteral(%q, %q, %v) = true for a placeholder or short value", key, value, quoted)
		}
		_ = labelInString(byte(len(value)), value)
	})
}

// FuzzRunProbe checks the probe of runs.go against brute force on any
// text: it visits exactly the maximal runs of minRun run bytes or more, in
// order (Horspool's windows read a few bytes of each).
func FuzzRunProbe(f *testing.F) {
	f.Add(words + " " + imageB64 + " " + commitHash)
	f.Add(strings.Repeat("a", minRun-1) + " " + strings.Repeat("b", minRun) + "." + strings.Repeat("c/", minRun))
	f.Add(`{"path":"episode-3/alice/notes.txt"} at com.example.agent.Runner.step(Runner.java:12)`)
	// Runs about minRun long at every offset against the probe's positions:
	// the probe's positions and the text's ends (runs.go forEachRun).
	for n := minRun - 2; n <= minRun+2; n++ {
		for off := 0; off <= minRun+1; off++ {
			f.Add(strings.Repeat(" ", off) + strings.Repeat("k", n) + " " + strings.Repeat("ab ", 9))
			f.Add(strings.Repeat(".", off) + strings.Repeat("Q", n))
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		var got, want [][2]int
		forEachRun(text, func(lo, hi int) { got = append(got, [2]int{lo, hi}) })
		for i := 0; i < len(text); {
			if !runByte[text[i]] {
				i++
				continue
			}
			j := i
			for j < len(text) && runByte[text[j]] {
				j++
			}
			if j-i >= minRun {
				want = append(want, [2]int{i, j})
			}
			i = j
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("runs of %q: probe %v, brute force %v", text, got, want)
		}
	})
}

// FuzzStatementAndValueEnd checks the readers of values.go on any text: the
// statement reader at every `";`/`';` and the end of a glued token at every
// offset never panic, and what they return lies within the text (the value
// between the quotes; an end at or after where it started).
func FuzzStatementAndValueEnd(f *testing.F) {
	for _, c := range ruleCases["secret-statement"] {
		f.Add(c.in)
	}
	f.Add("db:\n  password: correct horse # c\n- secret: a b ;x\nexport TOKEN=x y\r\n")
	f.Add(`a\"b";c` + "MZ1yGvKTjE0rY0cV8i47CjAa.uRHQPq.Xb1Mk2nEhe-4iUcrGOuegj57zMC!x.")
	f.Fuzz(func(t *testing.T, text string) {
		for at := 0; at+1 < len(text); at++ {
			if (text[at] == '"' || text[at] == '\'') && text[at+1] == ';' {
				if sp, ok := quotedStatement(text, at); ok && (sp.Start < 1 || sp.End != at || sp.Start > sp.End || text[sp.Start-1] != text[at]) {
					t.Fatalf("statement span %+v at %d of %q", sp, at, text)
				}
			}
		}
		for at := 0; at <= len(text); at++ {
			if e := gluedEnd(text, at); e < at || e > len(text) {
				t.Fatalf("gluedEnd(%q, %d) = %d", text, at, e)
			}
			if sp, ok := dottedToken(text, at, at); ok && (sp.Start < 0 || sp.End > len(text) || sp.Start >= sp.End) {
				t.Fatalf("dotted span %+v in %q", sp, text)
			}
		}
		// The whole line reader through the masker: the invariants of FuzzMask.
		m := NewCredentialMasker()
		spans, _ := m.Mask(text)
		prev := 0
		for _, s := range spans {
			if s.Start < prev || s.End <= s.Start || s.End > len(text) {
				t.Fatalf("span %+v out of order or bounds in %q", s, text)
			}
			prev = s.End
		}
	})
}
