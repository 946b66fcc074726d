package retriever

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// TestResultEncodedJSON: the appended JSON of run/search's answer is
// encoding/json's, byte for byte, for answers of every shape: no items and
// nil lists, every optional field set and not, texts with what JSON
// escapes (quotes, control characters, HTML, U+2028, invalid UTF-8),
// scores of every magnitude, each count of hidden alone and together.
func TestResultEncodedJSON(t *testing.T) {
	str := func(s string) *string { return &s }
	cases := []Result{
		{},
		{Items: []Item{}, Notices: []Notice{}},
		{Hidden: Hidden{Scope: 1}},
		{Hidden: Hidden{NoContext: 2, OtherConversation: 3}},
		{Hidden: Hidden{Scope: 4, NoContext: 5, Unfielded: 6, OtherConversation: 7}},
		{Notices: []Notice{{Field: "agent", Value: "Coder", Message: "no such agent <x> & \"y\"", Suggestion: str("coder")}, {Field: "episode", Value: "episode-9"}}},
		{Items: []Item{{
			Location: Location{URI: "file:///run/episode-1/coder/a.log", Range: Range{Start: Position{Line: 3, Character: 7}, End: Position{Line: 3, Character: 90}}},
			Score:    12.345678901234567, Text: "tab\there \"quoted\" \\ <b>&</b> \u2028\u2029 \x01 \xff end",
			Agent: "coder", Episode: "episode-1", Conversation: str("conv-1"), Reading: ReadingTold,
			Time: str("2026-12-07 10:00:00"), Level: str("WARN"), Matches: [][2]int{{0, 3}, {10, 16}},
			Path: "/run/episode-1/coder/a.log", File: "episode-1/coder/a.log", ByteStart: 7, ByteEnd: 90,
		}}},
	}
	for _, score := range []float64{0, 1, -1, 1e-7, 1e-6, 9.99999e-7, 1e20, 1e21, 1.5e300, 5e-324, math.MaxFloat64, 0.1, 123456789.125} {
		cases = append(cases, Result{Items: []Item{{Score: score, Matches: [][2]int{}}}})
	}
	r := rand.New(rand.NewPCG(33, 2))
	for range 200 {
		cases = append(cases, randomResult(r))
	}
	for i, res := range cases {
		want, err := json.Marshal(&res)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.EncodedJSON(); string(got) != string(want) {
			t.Fatalf("case %d:\n got  %s\n want %s", i, got, want)
		}
	}
}

// TestResultEncodedJSONNotFinite: a score encoding/json refuses is not
// encoded (nil), so that the caller's own encoding says the error.
func TestResultEncodedJSONNotFinite(t *testing.T) {
	for _, s := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		res := Result{Items: []Item{{Score: 1}, {Score: s}}}
		if got := res.EncodedJSON(); got != nil {
			t.Errorf("score %v: %s, want nil", s, got)
		}
	}
}

// FuzzResultEncodedJSON: an item of any text, names and score, and a notice
// of any values, encode as encoding/json encodes them.
func FuzzResultEncodedJSON(f *testing.F) {
	f.Add("text <&> \u2028", "coder", "conv-1", 1.25, 3, "agent", "x\xff")
	f.Add("", "", "", 0.0, 0, "", "")
	f.Fuzz(func(t *testing.T, text, agent, conv string, score float64, n int, field, value string) {
		res := Result{
			Items:   []Item{{Text: text, Agent: agent, Conversation: &conv, Score: score, Matches: [][2]int{{n, -n}}, Location: Location{URI: value}}},
			Hidden:  Hidden{Unfielded: n},
			Notices: []Notice{{Field: field, Value: value, Message: text, Suggestion: &agent}},
		}
		want, err := json.Marshal(&res)
		got := res.EncodedJSON()
		if err != nil {
			if got != nil {
				t.Fatalf("encoding/json refused it (%v), EncodedJSON wrote %s", err, got)
			}
			return
		}
		if string(got) != string(want) {
			t.Fatalf("\n got  %s\n want %s", got, want)
		}
	})
}

// randomResult is an answer of random shape and values.
func randomResult(r *rand.Rand) Result {
	opt := func(s string) *string {
		if r.IntN(3) == 0 {
			return nil
		}
		return &s
	}
	text := func() string {
		const alphabet = "ab <>&\"\\\t\n\x00\x1f\u00e9\u2028\u4e16\xff"
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	var res Result
	if r.IntN(4) > 0 {
		res.Items = []Item{}
		for range r.IntN(12) {
			it := Item{
				Location: Location{URI: "file:///" + text(), Range: Range{Start: Position{Line: r.IntN(1 << 20), Character: r.IntN(500)}, End: Position{Line: r.IntN(1 << 20), Character: r.IntN(500)}}},
				Score:    math.Float64frombits(r.Uint64()&^(0x7ff<<52)|uint64(r.IntN(0x7fe))<<52) * float64(1-2*r.IntN(2)),
				Text:     text(), Agent: text(), Episode: text(), Conversation: opt(text()),
				Reading: []Reading{ReadingNote, ReadingTold, ReadingSaid, ReadingLeftOut}[r.IntN(4)],
				Time:    opt(text()), Level: opt(text()),
			}
			if r.IntN(3) > 0 {
				it.Matches = [][2]int{}
				for range r.IntN(4) {
					it.Matches = append(it.Matches, [2]int{r.IntN(100), r.IntN(100)})
				}
			}
			res.Items = append(res.Items, it)
		}
	}
	res.Hidden = Hidden{Scope: r.IntN(2) * r.IntN(9), NoContext: r.IntN(2) * r.IntN(9), Unfielded: r.IntN(2) * r.IntN(9), OtherConversation: r.IntN(2) * r.IntN(9)}
	if r.IntN(4) > 0 {
		res.Notices = []Notice{}
		for range r.IntN(3) {
			res.Notices = append(res.Notices, Notice{Field: text(), Value: text(), Message: text(), Suggestion: opt(text())})
		}
	}
	return res
}
