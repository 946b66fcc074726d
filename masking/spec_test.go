package masking

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// spec_test.go pins spec §8 sentence by sentence: each sentence the masker
// owns has its examples here, through HidingOutside as runls runs it; each
// one another package owns names the test that holds it, and this test
// fails when that test is gone (a masking change once dropped §8's `token=`
// rule that no test pinned).

// section8 holds, per sentence of spec §8 (shortened), texts and what
// HidingOutside("/runs/r1") makes of them.
var section8 = []struct {
	sentence string
	cases    []ruleCase
}{
	{"local file paths outside the run folder (absolute, ~/…, C:\\…) become <path>; paths inside stay", []ruleCase{
		{"cat /home/bob/.ssh/config", "cat <path>"},
		{"open ~/notes/plan.md now", "open <path> now"},
		{`dir C:\Users\bob\secrets.txt`, "dir <path>"},
		same("wrote /runs/r1/episode-1/alice/notes.md"),
	}},
	{"PEM private key blocks (over several lines) become <secret>", []ruleCase{
		{"key:\n" + pemBlock + "\nafter", "key:\n<secret>\nafter"},
	}},
	{"a key block whose end line has not been written yet is hidden to the end of its record", []ruleCase{
		{"before\n" + pemBlock[:80], "before\n<secret>"},
	}},
	{"cloud access keys", []ruleCase{{"id " + awsID + " used", "id <secret> used"}}},
	{"source-host tokens", []ruleCase{{"GITHUB_TOKEN " + ghp + " x", "GITHUB_TOKEN <secret> x"}, {"glpat-" + alnum36[:20], "<secret>"}}},
	{"chat-service tokens", []ruleCase{{"bot " + slackB + " up", "bot <secret> up"}}},
	{"API keys named as such", []ruleCase{{"api_key=zqxapikeyvalue123", "api_key=<secret>"}, {"apikey: zqxapikeyvalue123", "apikey: <secret>"}}},
	{"Authorization: Bearer …", []ruleCase{{"Authorization: Bearer abc123DEF456ghi", "Authorization: Bearer <secret>"}}},
	{"JWTs", []ruleCase{{"got " + jwt + " back", "got <secret> back"}}},
	{"passwords in URLs", []ruleCase{{"postgres://admin:s3cr3t@db.local:5432/app", "postgres://<secret>@db.local:5432/app"}}},
	{"password=, secret=, token= assignments", []ruleCase{
		{"password=hunter2", "password=<secret>"},
		{"secret=zqxsecretvalue456", "secret=<secret>"},
		{"token=zqxtokenvalue789", "token=<secret>"},
	}},
	{"a credential name (password, secret, token, api_key/apikey, access_key, private_key, client_secret, …) hides its value whatever it looks like", []ruleCase{
		{"access_key=abc", "access_key=<secret>"},
		{"private_key: plainword", "private_key: <secret>"},
		{"client_secret=plainvalue", "client_secret=<secret>"},
		{"secret: banana", "secret: <secret>"},
		{"passwd = 'x1y'", "passwd = '<secret>'"},
	}},
	{"… in any case and separator style: env var, JSON/YAML key, CLI flag, header, query parameter", []ruleCase{
		{"export OPENAI_API_KEY=zqxapikeyvalue123", "export OPENAI_API_KEY=<secret>"},
		{`{"clientSecret": "zqxsecretvalue456"}`, `{"clientSecret": "<secret>"}`},
		{"db:\n  Access-Key: zqx456", "db:\n  Access-Key: <secret>"},
		{"tool --auth-token zqxtokenvalue789 -v", "tool --auth-token <secret> -v"},
		{"X-Api-Key: zqxapikeyvalue123", "X-Api-Key: <secret>"},
		{"GET https://h/v1?private_key=zqx789&page=2", "GET https://h/v1?private_key=<secret>&page=2"},
	}},
	{"unless the value is plainly not a literal (a variable reference, a call, a placeholder such as <token> or ***)", []ruleCase{
		same("token=$TOKEN"),
		same("password=${DB_PASSWORD}"),
		same("secret = getSecret()"),
		same("api_key=<token>"),
		same("password=***"),
	}},
}

// section8Elsewhere names, per sentence of spec §8 that another package
// holds, the file and the test function that hold it.
var section8Elsewhere = []struct{ sentence, file, test string }{
	{"off by default (runls without --mask shows every value)", "cmd/runls/masked_outputs_test.go", "TestMaskedOutputs"},
	{"a record is masked whole before it is cut; a block over its lines is hidden whole", "retriever/follow_test.go", "TestFollowMasking"},
	{"in a plain file masking sees the lines around each line; an open block is hidden to the end of what was read", "retriever/follow_test.go", "TestFollowMasking"},
	{"a record that grows is masked again as a whole", "retriever/follow_test.go", "TestFollowMasking"},
	{"piece ranges still point at the characters in the file as written", "masking/masking_test.go", "TestApplyAndMapping"},
	{"masked: run/search, workspace/symbol, hover, documentSymbol, run/records, run/failures", "lsp/masked_outputs_test.go", "TestMaskedOutputs"},
	{"masked: the CLI's outputs", "cmd/runls/masked_outputs_test.go", "TestMaskedOutputs"},
	{"masked: the MCP tools' text and structured content", "mcpserver/masked_outputs_test.go", "TestMaskedOutputs"},
	{"masked: what runls ship sends, on unless --no-mask", "fleet/masked_outputs_test.go", "TestShipMaskedOutputs"},
}

func TestSpecSection8(t *testing.T) {
	m := HidingOutside("/runs/r1")
	for _, s := range section8 {
		for _, c := range s.cases {
			if got := maskString(m, c.in); got != c.want {
				t.Errorf("§8 %q: mask(%q)\n got %q\nwant %q", s.sentence, c.in, got, c.want)
			}
		}
	}
	if _, open := m.Mask("before\n" + pemBlock[:80]); open < 0 {
		t.Errorf("§8: an unclosed key block is not reported open")
	}
	for _, e := range section8Elsewhere {
		src, err := os.ReadFile(filepath.Join("..", e.file))
		if err != nil {
			t.Errorf("§8 %q: %v", e.sentence, err)
			continue
		}
		if !strings.Contains(string(src), "func "+e.test+"(") {
			t.Errorf("§8 %q: %s holds no %s", e.sentence, e.file, e.test)
		}
	}
}
