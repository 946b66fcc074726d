package retriever

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"runls/masking"
)

func TestFailurePattern(t *testing.T) {
	tests := []struct{ a, b string }{
		{"tool call 17 failed after 3 retries", "tool call 4 failed after 12 retries"},
		{"request 1b4e28ba-2fa1-11d2-883f-0016d3cca427 refused", "request 6fa459ea-ee8a-3ca4-894e-db77e160355e refused"},
		{"object 0x7f3a9c freed twice", "object 0xDEAD freed twice"},
		{"commit 9fceb02d0ae598e95dc970b74767f19372d61af8 not found", "commit 1a2b3c not found"},
		{"cannot open /home/alice/work/plan.md: no such file", "cannot open ./b/c.txt: no such file"},
		{`no column "currency" in invoices`, `no column "amount_due" in invoices`},
		{"key 'abc' missing", "key 'x y z' missing"},
		{"C:\\Users\\bob\\x.txt is locked", "~/notes/y is locked"},
		{"  spaced   out  7", "spaced out 8"},
		{"call(7) failed [x, 3]; {y}", "call(8) failed [x, 4]; {y}"},
	}
	for _, tt := range tests {
		if pa, pb := failurePattern(tt.a), failurePattern(tt.b); pa != pb {
			t.Errorf("%q -> %q\n%q -> %q\nwant one pattern", tt.a, pa, tt.b, pb)
		}
	}
	differ := []struct{ a, b string }{
		{"tool call failed", "tool call refused"},
		{"don't retry 3", "do retry 3"},
		{"deface the wall", "decade the wall"},
	}
	for _, tt := range differ {
		if pa, pb := failurePattern(tt.a), failurePattern(tt.b); pa == pb {
			t.Errorf("%q and %q both -> %q, want two patterns", tt.a, tt.b, pa)
		}
	}
	if got := failurePattern(`retry 3 of conv-12 at /tmp/x: "boom"`); got != "retry <n> of conv-<n> at <path>: <str>" {
		t.Errorf("got %q", got)
	}
	// A pattern is its own pattern: a quotation right after a slash (the
	// fuzzer's finding) stays "/<str>", not a path once read again.
	for _, s := range []string{"/`x`", `split on / "a b"`, `at /"q"/ and 0''`} {
		p := failurePattern(s)
		if again := failurePattern(p); again != p {
			t.Errorf("%q -> %q -> %q, want the pattern again", s, p, again)
		}
	}
}

const stackTail = "java.lang.IllegalStateException: state 7 is bad\n" +
	"\tat com.example.A.run(A.java:12)\n" +
	"\t... 3 more\n"

var failuresRun = map[string]string{
	"episode-1/alice/alice.log": "" +
		"2026-10-21 18:00:01 ERROR [running] [conv-1] Alice tool call 17 failed after 3 retries\n" +
		"2026-10-21 18:00:02 INFO  [running] [conv-1] Alice all fine\n" +
		"2026-10-21 18:00:03 WARN  [running] [conv-1] Alice slow answer 900 ms\n" +
		"2026-10-21 18:00:04 DEBUG [running] [conv-1] Alice retrying\n" + stackTail +
		"2026-10-21 18:00:05,250 ERROR [running] [conv-2] Alice tool call 4 failed after 12 retries\n",
	"episode-2/bob/bob.log": "" +
		"2026-10-22 09:00:00 ERROR [running] [conv-1] Bob tool call 99 failed after 1 retries\n" +
		"2026-10-22 09:00:01 ERROR [running] [conv-1] Bob cannot open /home/bob/plan.md: password=hunter2hunter2\n" +
		"2026-10-22 09:00:02 ERROR [running] [conv-1] Bob cannot open /srv/other.md: password=hunter7hunter9\n",
	"episode-2/bob/bob.history": "" +
		"2026-10-22 09:00:03 [running] [conv-1] Bob was told about it\n" +
		"Caused by: java.io.IOException: pipe 3 broken\n",
	"episode-2/bob/notes.txt": "ERROR not a record file\n",
}

func failuresOf(t *testing.T, ix *Index, req FailuresRequest) FailuresResult {
	t.Helper()
	res, err := ix.Failures(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// summary is a group as one comparable line.
func summary(g FailureGroup) string {
	first, last := "null", "null"
	if g.First != nil {
		first = *g.First
	}
	if g.Last != nil {
		last = *g.Last
	}
	lines := make([]string, len(g.Records))
	for i, r := range g.Records {
		lines[i] = fmt.Sprintf("%s:%d", g.Paths[i][strings.LastIndex(g.Paths[i], "episode-"):], r.Range.Start.Line+1)
	}
	return fmt.Sprintf("%d %q %v %v %s..%s %v", g.Count, g.Pattern, g.Agents, g.Episodes, first, last, lines)
}

func TestFailures(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, failuresRun)})
	tests := []struct {
		name string
		req  FailuresRequest
		want []string
	}{
		{"the run, ERROR and exceptions: one group for the tool calls", FailuresRequest{}, []string{
			`3 "tool call <n> failed after <n> retries" [alice bob] [episode-1 episode-2] 2026-10-21 18:00:01..2026-10-22 09:00:00 [episode-1/alice/alice.log:1 episode-1/alice/alice.log:8 episode-2/bob/bob.log:1]`,
			`2 "cannot open <path>: password=hunter<n>hunter<n>" [bob] [episode-2] 2026-10-22 09:00:01..2026-10-22 09:00:02 [episode-2/bob/bob.log:2 episode-2/bob/bob.log:3]`,
			`1 "retrying" [alice] [episode-1] 2026-10-21 18:00:04..2026-10-21 18:00:04 [episode-1/alice/alice.log:4]`,
			`1 "was told about it" [bob] [episode-2] 2026-10-22 09:00:03..2026-10-22 09:00:03 [episode-2/bob/bob.history:1]`,
		}},
		{"WARN widens", FailuresRequest{MinLevel: "warn", Episode: "episode-1"}, []string{
			`2 "tool call <n> failed after <n> retries" [alice] [episode-1] 2026-10-21 18:00:01..2026-10-21 18:00:05,250 [episode-1/alice/alice.log:1 episode-1/alice/alice.log:8]`,
			`1 "slow answer <n> ms" [alice] [episode-1] 2026-10-21 18:00:03..2026-10-21 18:00:03 [episode-1/alice/alice.log:3]`,
			`1 "retrying" [alice] [episode-1] 2026-10-21 18:00:04..2026-10-21 18:00:04 [episode-1/alice/alice.log:4]`,
		}},
		{"INFO: below the memo's floor, read for the request", FailuresRequest{MinLevel: "INFO", Agent: "alice"}, []string{
			`2 "tool call <n> failed after <n> retries" [alice] [episode-1] 2026-10-21 18:00:01..2026-10-21 18:00:05,250 [episode-1/alice/alice.log:1 episode-1/alice/alice.log:8]`,
			`1 "all fine" [alice] [episode-1] 2026-10-21 18:00:02..2026-10-21 18:00:02 [episode-1/alice/alice.log:2]`,
			`1 "slow answer <n> ms" [alice] [episode-1] 2026-10-21 18:00:03..2026-10-21 18:00:03 [episode-1/alice/alice.log:3]`,
			`1 "retrying" [alice] [episode-1] 2026-10-21 18:00:04..2026-10-21 18:00:04 [episode-1/alice/alice.log:4]`,
		}},
		{"one agent", FailuresRequest{Agent: "bob", Episode: "episode-2"}, []string{
			`2 "cannot open <path>: password=hunter<n>hunter<n>" [bob] [episode-2] 2026-10-22 09:00:01..2026-10-22 09:00:02 [episode-2/bob/bob.log:2 episode-2/bob/bob.log:3]`,
			`1 "tool call <n> failed after <n> retries" [bob] [episode-2] 2026-10-22 09:00:00..2026-10-22 09:00:00 [episode-2/bob/bob.log:1]`,
			`1 "was told about it" [bob] [episode-2] 2026-10-22 09:00:03..2026-10-22 09:00:03 [episode-2/bob/bob.history:1]`,
		}},
		{"an episode with no folder", FailuresRequest{Episode: "episode-9"}, nil},
		{"an agent with no folder", FailuresRequest{Agent: "Alice"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := failuresOf(t, ix, tt.req)
			var got []string
			for _, g := range res.Groups {
				got = append(got, summary(g))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestFailuresMasked: with masking on, the text is masked before it is
// grouped, so two records differing only in a secret are one group and no
// secret is in a pattern.
func TestFailuresMasked(t *testing.T) {
	root := writeRun(t, failuresRun)
	ix := openTest(t, Options{Root: root, Masker: masking.HidingOutside(root)})
	res := failuresOf(t, ix, FailuresRequest{Episode: "episode-2", Agent: "bob"})
	if len(res.Groups) == 0 || res.Groups[0].Count != 2 || strings.Contains(res.Groups[0].Pattern, "hunter") || !strings.Contains(res.Groups[0].Pattern, "<secret>") {
		t.Fatalf("first group %+v: want the two cannot-open records, their password masked", res.Groups)
	}
	for _, g := range res.Groups {
		if strings.Contains(g.Pattern, "hunter") {
			t.Errorf("pattern %q holds a secret", g.Pattern)
		}
	}
}

// TestFailuresFollow: after appends (the last record growing a stack trace,
// new records) and a rewrite, the answer is a fresh index's: the memo of
// each file never gives a record twice nor misses one.
func TestFailuresFollow(t *testing.T) {
	root := writeRun(t, failuresRun)
	ix := openTest(t, Options{Root: root})
	steps := []func(){
		func() {},
		func() { appendFile(t, root, "episode-1/alice/alice.log", stackTail) },
		func() {
			appendFile(t, root, "episode-1/alice/alice.log", "2026-10-21 18:00:09 ERROR [running] [conv-1] Alice tool call 5 failed after 1 retries\n")
		},
		func() {
			writeFile(t, root, "episode-2/bob/bob.log", "2026-10-22 09:00:00 ERROR [running] [conv-1] Bob a new file\n")
		},
		func() {
			appendFile(t, root, "episode-2/bob/bob.history", "2026-10-22 09:00:04 [running] [conv-1] Bob again\njava.lang.Error\n")
		},
	}
	for i, step := range steps {
		step()
		for _, req := range []FailuresRequest{{}, {MinLevel: "WARN"}} {
			got := failuresOf(t, ix, req)
			fresh := openTest(t, Options{Root: root})
			want := failuresOf(t, fresh, req)
			if !reflect.DeepEqual(got.Groups, want.Groups) {
				t.Errorf("step %d, %+v: followed\n%+v\nfresh\n%+v", i, req, got, want)
			}
			// The JSON kept with the answer is the answer's.
			kept, err1 := json.Marshal(got)
			made, err2 := json.Marshal(FailuresResult{Groups: want.Groups})
			if err1 != nil || err2 != nil || string(kept) != string(made) {
				t.Errorf("step %d: the JSON kept differs from the answer's (%v %v)", i, err1, err2)
			}
		}
	}
}

func FuzzFailurePattern(f *testing.F) {
	for _, s := range []string{"tool call 17 failed", `x "q" 'y' (z) [1, 2]; {3}`, "/a/b 0x1f 1b4e28ba-2fa1-11d2-883f-0016d3cca427", "don't"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := failurePattern(s)
		if again := failurePattern(p); again != p {
			t.Fatalf("%q -> %q -> %q: a pattern is its own pattern", s, p, again)
		}
	})
}

func TestFailuresBounds(t *testing.T) {
	var b strings.Builder
	for i := range MaxFailureGroups + 5 {
		word := strings.Repeat(string(rune('a'+i%26)), 1+i/26)
		for range 1 + i%3 {
			fmt.Fprintf(&b, "2026-10-21 18:00:00 ERROR [running] [-] A failure %s\n", word)
		}
	}
	for range MaxFailureRecords + 20 {
		b.WriteString("2026-10-21 18:00:01 ERROR [running] [-] A the common one\n")
	}
	ix := openTest(t, Options{Root: writeRun(t, map[string]string{"episode-1/a/a.log": b.String()})})
	res := failuresOf(t, ix, FailuresRequest{})
	if len(res.Groups) != MaxFailureGroups {
		t.Errorf("%d groups, want %d", len(res.Groups), MaxFailureGroups)
	}
	if g := res.Groups[0]; g.Pattern != "the common one" || g.Count != MaxFailureRecords+20 || len(g.Records) != MaxFailureRecords {
		t.Errorf("first group %q: count %d, %d records; want the whole count and %d records", g.Pattern, g.Count, len(g.Records), MaxFailureRecords)
	}
	for i := 1; i < len(res.Groups); i++ {
		if res.Groups[i].Count > res.Groups[i-1].Count {
			t.Fatalf("group %d has more records than the one before", i)
		}
	}
}

func TestFailuresInvalid(t *testing.T) {
	for _, tt := range []struct {
		req   FailuresRequest
		field string
	}{
		{FailuresRequest{Episode: "ep-1"}, "episode"},
		{FailuresRequest{Agent: "../x"}, "agent"},
		{FailuresRequest{MinLevel: "FATAL"}, "minLevel"},
	} {
		var fe *FieldError
		if err := tt.req.Validate(); !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("%+v: %v, want an error naming %s", tt.req, err, tt.field)
		}
	}
}
