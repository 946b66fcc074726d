package retriever

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func intPtr(n int) *int { return &n }

// TestFailuresViewParams: maxRecords and pattern, good values and bad.
func TestFailuresViewParams(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, failuresRun)})
	const calls = "tool call <n> failed after <n> retries"
	callsLine := `3 "tool call <n> failed after <n> retries" [alice bob] [episode-1 episode-2] 2026-10-21 18:00:01..2026-10-22 09:00:00 `
	tests := []struct {
		name string
		req  FailuresRequest
		want []string
	}{
		{"no locations: the groups whole otherwise", FailuresRequest{MaxRecords: intPtr(0)}, []string{
			callsLine + `[]`,
			`2 "cannot open <path>: password=hunter<n>hunter<n>" [bob] [episode-2] 2026-10-22 09:00:01..2026-10-22 09:00:02 []`,
			`1 "retrying" [alice] [episode-1] 2026-10-21 18:00:04..2026-10-21 18:00:04 []`,
			`1 "was told about it" [bob] [episode-2] 2026-10-22 09:00:03..2026-10-22 09:00:03 []`,
		}},
		{"one location: the first in time", FailuresRequest{MaxRecords: intPtr(1)}, []string{
			callsLine + `[episode-1/alice/alice.log:1]`,
			`2 "cannot open <path>: password=hunter<n>hunter<n>" [bob] [episode-2] 2026-10-22 09:00:01..2026-10-22 09:00:02 [episode-2/bob/bob.log:2]`,
			`1 "retrying" [alice] [episode-1] 2026-10-21 18:00:04..2026-10-21 18:00:04 [episode-1/alice/alice.log:4]`,
			`1 "was told about it" [bob] [episode-2] 2026-10-22 09:00:03..2026-10-22 09:00:03 [episode-2/bob/bob.history:1]`,
		}},
		{"one group", FailuresRequest{Pattern: calls}, []string{
			callsLine + `[episode-1/alice/alice.log:1 episode-1/alice/alice.log:8 episode-2/bob/bob.log:1]`,
		}},
		{"one group, two locations", FailuresRequest{Pattern: calls, MaxRecords: intPtr(2)}, []string{
			callsLine + `[episode-1/alice/alice.log:1 episode-1/alice/alice.log:8]`,
		}},
		{"one group of an episode", FailuresRequest{Pattern: calls, Episode: "episode-2"}, []string{
			`1 "tool call <n> failed after <n> retries" [bob] [episode-2] 2026-10-22 09:00:00..2026-10-22 09:00:00 [episode-2/bob/bob.log:1]`,
		}},
		{"a WARN group asked at WARN", FailuresRequest{Pattern: "slow answer <n> ms", MinLevel: "WARN"}, []string{
			`1 "slow answer <n> ms" [alice] [episode-1] 2026-10-21 18:00:03..2026-10-21 18:00:03 [episode-1/alice/alice.log:3]`,
		}},
		{"a WARN group asked at ERROR: none", FailuresRequest{Pattern: "slow answer <n> ms"}, nil},
		{"a pattern no group has", FailuresRequest{Pattern: "tool call 17 failed after 3 retries"}, nil},
		{"a pattern of an INFO group, below the memo", FailuresRequest{Pattern: "all fine", MinLevel: "INFO", MaxRecords: intPtr(100)}, []string{
			`1 "all fine" [alice] [episode-1] 2026-10-21 18:00:02..2026-10-21 18:00:02 [episode-1/alice/alice.log:2]`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := failuresOf(t, ix, tt.req)
			if res.Groups == nil {
				t.Fatalf("Groups nil: want a list (%s)", res.EncodedJSON())
			}
			var got []string
			for _, g := range res.Groups {
				got = append(got, summary(g))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if enc, made := res.EncodedJSON(), appendFailures(nil, res.Groups); string(enc) != string(made) {
				t.Errorf("JSON\n%s\nwant\n%s", enc, made)
			}
		})
	}
	// The default answer is §9's whatever was asked before.
	whole := failuresOf(t, ix, FailuresRequest{})
	if again := failuresOf(t, ix, FailuresRequest{MaxRecords: intPtr(MaxFailureRecords)}); string(again.EncodedJSON()) != string(whole.EncodedJSON()) {
		t.Errorf("maxRecords 100 is not the default answer:\n%s\n%s", again.EncodedJSON(), whole.EncodedJSON())
	}
	if n := len(whole.Groups[0].Records); n != 3 {
		t.Errorf("the default answer's first group has %d records after views were asked, want 3", n)
	}
}

func TestFailuresViewInvalid(t *testing.T) {
	for _, tt := range []struct {
		n     int
		value string
	}{{-1, "-1"}, {MaxFailureRecords + 1, "101"}, {1 << 40, "1099511627776"}} {
		var fe *FieldError
		err := FailuresRequest{MaxRecords: intPtr(tt.n)}.Validate()
		if !errors.As(err, &fe) || fe.Field != "maxRecords" || fe.Value != tt.value || !strings.Contains(err.Error(), tt.value) {
			t.Errorf("maxRecords %d: %v, want an error naming maxRecords and %s", tt.n, err, tt.value)
		}
	}
	for _, n := range []int{0, 1, MaxFailureRecords} {
		if err := (FailuresRequest{MaxRecords: intPtr(n), Pattern: "x <n>"}).Validate(); err != nil {
			t.Errorf("maxRecords %d: %v", n, err)
		}
	}
}

// TestFailuresPerGroup: what an editor fetches (the groups without their
// records, then each group's records by its pattern) equals the whole
// answer, through appends, at ERROR and WARN; a group ranked below the
// best MaxFailureGroups is answered by its pattern too, as the brute force
// groups it.
func TestFailuresPerGroup(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	files := []string{"episode-1/alice/alice.log", "episode-1/bob/bob.log", "episode-2/alice/alice.log", "episode-10/carol/carol.history"}
	run := map[string]string{"episode-3/dave/dave.log": "java.lang.Error: before 1\n"}
	for _, f := range files {
		run[f] = "2026-10-21 18:00:00 INFO  [running] [conv-1] X started\n"
	}
	root := writeRun(t, run)
	ix := openTest(t, Options{Root: root})
	sec, belowSeen := 0, map[string]int{} // groups below the best asked for, by base request
	line := func(file, level, text string) string {
		sec += rng.IntN(2)
		stamp := fmt.Sprintf("2026-10-21 %02d:%02d:%02d", 18+sec/3600, sec/60%60, sec%60)
		if strings.HasSuffix(file, ".history") {
			return fmt.Sprintf("%s [running] [conv-1] X %s\n", stamp, text)
		}
		return fmt.Sprintf("%s %-5s [running] [conv-1] X %s\n", stamp, level, text)
	}
	check := func(step string) {
		t.Helper()
		for _, base := range []FailuresRequest{{}, {MinLevel: "WARN"}, {Episode: "episode-1"}, {MinLevel: "INFO", Agent: "alice"}} {
			whole := failuresOf(t, ix, base)
			collapsed := base
			collapsed.MaxRecords = intPtr(0)
			if got, want := failuresOf(t, ix, collapsed).Groups, trimGroups(whole.Groups, 0); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, %+v: maxRecords 0\n%v\nwant the whole answer's groups without records\n%v", step, base, got, want)
			}
			shown := map[string]bool{}
			for _, g := range whole.Groups {
				shown[g.Pattern] = true
				one := base
				one.Pattern = g.Pattern
				if got := failuresOf(t, ix, one).Groups; len(got) != 1 || !reflect.DeepEqual(got[0], g) {
					t.Fatalf("%s, %+v: the group fetched\n%v\nthe whole answer's\n%v", step, one, got, summary(g))
				}
			}
			// Every pattern the run has, the best groups' and the others'
			// (below WARN read again for each).
			q, _, _ := base.parse()
			floor := q.minLevel
			found := foundNow(t, ix, q)
			patterns := map[string]bool{}
			for _, f := range found {
				for _, e := range slices.Concat(f.kept, f.last) {
					patterns[e.pattern] = true
				}
			}
			below := 0
			for p := range patterns {
				one := base
				one.Pattern, one.MaxRecords = p, intPtr(1+rng.IntN(MaxFailureRecords))
				got := failuresOf(t, ix, one).Groups
				want := trimGroups(bruteFailures(ix.root, onlyPattern(found, p), floor).Groups, *one.MaxRecords)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, %+v: fetched\n%v\nbrute force\n%v", step, one, got, want)
				}
				if !shown[p] && len(want) == 1 {
					below++
				}
			}
			if base.Episode == "" && base.Agent == "" && len(whole.Groups) == MaxFailureGroups && below == 0 {
				t.Fatalf("%s: no group below the best %d was asked for", step, MaxFailureGroups)
			}
			belowSeen[base.MinLevel+base.Episode] += below
		}
	}
	check("start")
	for step := range 10 {
		for range 50 + rng.IntN(100) {
			f := files[rng.IntN(len(files))]
			var text string
			switch k := rng.IntN(10); {
			case k < 5:
				text = line(f, "ERROR", fmt.Sprintf("failure kind %s after %d tries", strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(20)), rng.IntN(9)))
			case k < 7:
				text = line(f, "ERROR", fmt.Sprintf("tool call %d failed", rng.IntN(1000)))
			case k < 8:
				text = "java.lang.IllegalStateException: state " + fmt.Sprint(rng.IntN(5)) + "\n\tat A.b(A.java:1)\n"
			case k < 9:
				text = line(f, "WARN", fmt.Sprintf("slow %d", rng.IntN(3)))
			default:
				text = line(f, "INFO", "all is fine")
			}
			appendFile(t, root, f, text)
		}
		check(fmt.Sprintf("step %d", step))
	}
	for _, base := range []string{"", "WARN", "INFO"} {
		if belowSeen[base] == 0 {
			t.Errorf("minLevel %q: no group below the best %d was asked for", base, MaxFailureGroups)
		}
	}
	if g := failuresOf(t, ix, FailuresRequest{}).Groups; len(g) != MaxFailureGroups || g[0].Count <= MaxFailureRecords {
		t.Errorf("%d groups, the first of %d: want %d and more than %d records in the first", len(g), g[0].Count, MaxFailureGroups, MaxFailureRecords)
	}
}

// onlyPattern is files with only the failures of pattern p.
func onlyPattern(files []fileFailures, p string) []fileFailures {
	out := make([]fileFailures, len(files))
	for i, f := range files {
		keep := func(e failEntry) bool { return e.pattern != p }
		f.kept = slices.DeleteFunc(slices.Clone(f.kept), keep)
		f.last = slices.DeleteFunc(slices.Clone(f.last), keep)
		out[i] = f
	}
	return out
}
