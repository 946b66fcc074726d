package masking

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// TestValueEndsByContext pins where an unquoted value given to a credential
// name ends (values.go): the rest of the line in a YAML, env or INI line,
// one word on a command line and in prose.
func TestValueEndsByContext(t *testing.T) {
	m := HidingOutside("/runs/r1")
	for _, c := range []struct{ context, in, want string }{
		{"YAML line", "password: correct horse battery staple", "password: <secret>"},
		{"YAML line, indented", "db:\n  password: correct horse battery staple\n  user: bob", "db:\n  password: <secret>\n  user: bob"},
		{"YAML list item", "- password: correct horse battery staple", "- password: <secret>"},
		{"YAML line, trailing comment", "  secret: Zq81 two words # rotated in May", "  secret: <secret> # rotated in May"},
		{"YAML line, quoted key", `"api_key": Zq81 second third`, `"api_key": <secret>`},
		{"env line", "DB_PASSWORD=correct horse battery staple", "DB_PASSWORD=<secret>"},
		{"env line, export", "export API_TOKEN=Zq81 words  ", "export API_TOKEN=<secret>  "},
		{"INI line", "[db]\npassword = correct horse ; old one\nhost = h", "[db]\npassword = <secret> ; old one\nhost = h"},
		{"line in a JSON string", `{"content": "db:\n  password: correct horse staple\n  user: bob"}`, `{"content": "db:\n  password: <secret>\n  user: bob"}`},
		{"CLI flag", "mysql --password correct horse -u root", "mysql --password <secret> horse -u root"},
		{"CLI flag with =", "app --api-key=abc123 serve now", "app --api-key=<secret> serve now"},
		{"prose", "alice said: the password: hunter2 is the one", "alice said: the password: <secret> is the one"},
		{"prose, a passphrase", "alice tool output: password: correct horse battery staple", "alice tool output: password: <secret>"},
		{"prose, a passphrase with joiners", "told: aws_secret_access_key: value with quotes and spaces", "told: aws_secret_access_key: <secret>"},
		{"prose, a passphrase then the sentence", "the password: correct horse battery staple was given to bob", "the password: <secret> was given to bob"},
		{"prose, a clause's comma", "bob wrote password: blue moon rising, then left", "bob wrote password: <secret>, then left"},
		{"prose, a sentence's end", "her secret: Zq81 Yx. Bob left", "her secret: <secret>. Bob left"},
		{"prose, another field after", "login user: bob password: hunter2 user: alice", "login user: bob password: <secret> user: alice"},
		{"prose, a path after", "the token: Zq81x src/main.go", "the token: <secret> src/main.go"},
		{"prose, a log's column", "auth token: Zq81x  duration=3", "auth token: <secret>  duration=3"},
		{"prose, at most eight words", "key is api_key: a1 b2 c3 d4 e5 f6 g7 h8 i9 j10", "key is api_key: <secret> i9 j10"},
		{"fields after =: one word", "alice tool: token=abc123 zz yy", "alice tool: token=<secret> zz yy"},
		{"record text after a header", "2026-10-21 18:00:02,345 INFO  [running] [conv-1] alice tool output: token=abc123 done", "2026-10-21 18:00:02,345 INFO  [running] [conv-1] alice tool output: token=<secret> done"},
		{"comparison in code", "  password == hunter2 and more", "  password == <secret> and more"},
		{"prose word first: kept whole", "Password: the one in the vault", "Password: the one in the vault"},
		{"status word first: kept whole", "token: expired yesterday", "token: expired yesterday"},
	} {
		if got := maskString(m, c.in); got != c.want {
			t.Errorf("%s: mask(%q)\n got %q\nwant %q", c.context, c.in, got, c.want)
		}
	}
}

// TestBase64Anywhere pins runs.go: base64 whose decoded text holds a
// secret anywhere, of any rule, is hidden wherever the run stands; base64
// of prose, hashes and images stays.
func TestBase64Anywhere(t *testing.T) {
	m := HidingOutside("/runs/r1")
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	rawURL := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	dockerAuth, err := json.Marshal(map[string]any{"auths": map[string]any{"registry.example.com": map[string]string{"auth": b64("ci:glpat-" + alnum36[:20])}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, in, want string }{
		{"token at the start", "the auth is " + b64(ghp) + " ok", "the auth is <secret> ok"},
		{"token in the middle", "GH_B64=" + b64("export GITHUB_TOKEN="+ghp+"\nexport X=1"), "GH_B64=<secret>"},
		{"a vendor without a keyword of its own base64", "data: " + b64("STRIPE="+"sk_live_"+alnum36), "data: <secret>"},
		{"a named literal", "v " + b64("password=hunter2 and db=prod") + " w", "v <secret> w"},
		{"URL-safe, no padding", "x=" + rawURL("{\"token\":\"zqxtokenvalue789\"}?>"), "x=<secret>"},
		{"base64 in base64", "config: " + b64(string(dockerAuth)), "config: <secret>"},
		{"glued after a word", "Basic" + b64("u:"+ghp), "<secret>"},
		{"in a JSON string", `{"auth":"` + b64("ci:"+ghp) + `"}`, `{"auth":"<secret>"}`},
		{"prose stays", "payload " + b64("bob said the build of the runner passed after the second retry"), ""},
		{"prose about a token stays", "payload " + b64("ghp is a prefix, and this is prose about tokens"), ""},
		{"an image stays", imageB64, ""},
		{"a hash stays", `"integrity": "sha512-` + b64(strings.Repeat("\x9f\x01\xfe", 20)) + `"`, ""},
		{"a path stays", "/home/runner/work/project/packages/core/src/index.ts", "<path>"},
		{"a certificate stays", "tls.crt: " + b64("-----BEGIN CERTIFICATE-----\nMIIFazCCA1OgAwIBAgIUDem\n-----END CERTIFICATE-----\n"), ""},
	} {
		want := c.want
		if want == "" {
			want = c.in
		}
		if got := maskString(m, c.in); got != want {
			t.Errorf("%s: mask(%q)\n got %q\nwant %q", c.name, c.in, got, want)
		}
	}
}

// TestDottedToken pins the three-part token of runs.go.
func TestDottedToken(t *testing.T) {
	m := HidingOutside("/runs/r1")
	for _, c := range []struct{ in, want string }{
		{"bot MZ1yGvKTjE0rY0cV8i47CjAa.uRHQPq.Xb1Mk2nEhe-4iUcrGOuegj57zMC ok", "bot <secret> ok"},
		{"ATMyOTQ4MTN5OTU5MTDwMEcxNg.GSwJyi.sbaw8msOR3Wi6vPUzeIWy_P0vJbB0UuRVjH8l8", "<secret>"},
		{"MTAyOTQ4MTN5OTU5MTDwMEcxNg.YjESug.UNf-1GhsIG8zWT409q2C7Bh_zWQ!4o_NmQWUMs, then", "<secret>, then"},
		{"short.abcdef.MZ1yGvKTjE0rY0cV8i47CjAaXb1Mk2n", ""},
		{"com.example.agent.RunnerWithAVeryLongName2.step(Runner.java:12)", ""},
		{"org.Abcdefghijklmnopqrstuvw1.tests.Abcdefghijklmnopqrstuvwxyz123", ""},
	} {
		want := c.want
		if want == "" {
			want = c.in
		}
		if got := maskString(m, c.in); got != want {
			t.Errorf("mask(%q)\n got %q\nwant %q", c.in, got, want)
		}
	}
}

// TestRunSecretsProbe checks the probe against brute force: every run of
// minRun token bytes or more is visited, wherever it stands.
func TestRunSecretsProbe(t *testing.T) {
	token := base64.StdEncoding.EncodeToString([]byte("password=zqxsecret1"))
	m := NewCredentialMasker()
	for pad := 0; pad < 2*minRun; pad++ {
		for _, sep := range []string{" ", "\n", ":", "\"", ","} {
			text := strings.Repeat("a b ", pad/4) + strings.Repeat("x", pad%4) + sep + token + sep + "tail"
			spans, _ := m.Mask(text)
			at := strings.Index(text, token)
			ok := false
			for _, s := range spans {
				ok = ok || s.Start <= at && s.End >= at+len(token)
			}
			if !ok {
				t.Errorf("pad %d sep %q: the base64 run in %q is not hidden: %v", pad, sep, text, spans)
			}
		}
	}
}

// TestMultiWordValueHiddenWhole checks a value of several words (the
// scanners' sample ds:keyword/tp6) where the samples test's contexts write
// it: at the start of a YAML, env or INI line and mid-line in prose, it is
// hidden whole.
func TestMultiWordValueHiddenWhole(t *testing.T) {
	m := HidingOutside("/runs/r1")
	for _, in := range []string{
		"aws_secret_access_key: value with quotes and spaces",
		"config.yaml:\n  aws_secret_access_key: value with quotes and spaces\n  region: x",
		"AWS_SECRET_ACCESS_KEY=value with quotes and spaces",
		"alice was told: aws_secret_access_key: value with quotes and spaces",
	} {
		if got := maskString(m, in); strings.Contains(got, "quotes") || !strings.Contains(got, SecretPlaceholder) {
			t.Errorf("mask(%q) = %q: the value is not hidden whole", in, got)
		}
	}
}
