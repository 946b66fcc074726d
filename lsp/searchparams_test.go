package lsp

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// searchParamsJSON is encoding/json's decoding of run/search's params
// (typed): "" fields dropped, then encoding/json.
func searchParamsJSON(raw []byte) (SearchParams, error) {
	var p SearchParams
	err := json.Unmarshal(dropEmptyStrings(raw), &p)
	return p, err
}

// TestSearchParamsPlain: the shapes clients send are decoded without
// encoding/json, as it decodes them; every other shape is left to it.
func TestSearchParamsPlain(t *testing.T) {
	plain := []string{
		`{}`,
		`{"query":"potos","topK":5}`,
		`{"query":"deploy database migration","topK":10,"scope":"records"}`,
		`{"turnMessage":"why did the build fail?","episode":"episode-2","conversation":"conv-1","agent":"a1"}`,
		`{"query":"x","from":"2024-01-01T00:00:00Z","to":"2024-01-02","allConversations":true}`,
		`{"query":"x","allConversations":false,"topK":-3}`,
		`{"query":"","topK":"","agent":null,"allConversations":""}`,
		`{ "query" : "spaced" , "topK" : 1 }`,
		`{"query":"ünïcödé ✓ 日本"}`,
		`{"topK":0}`,
		`{"topK":-0}`,
		`{"topK":123456789012345678}`,
	}
	for _, raw := range plain {
		var got SearchParams
		if !got.decodeFast([]byte(raw)) {
			t.Errorf("%s: not decoded plainly", raw)
			continue
		}
		want, err := searchParamsJSON([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: plain %+v, encoding/json %+v", raw, show(got), show(want))
		}
	}
	other := []string{
		`null`, `[]`, `"query"`, `{"query":"a\"b"}`, `{"query":"a\u00e9"}`, `{"Query":"x"}`,
		`{"query":"x","query":"y"}`, `{"limit":3}`, `{"topK":5.0}`, `{"topK":1e2}`,
		`{"topK":"5"}`, `{"topK":1234567890123456789}`, `{"query":5}`, `{"query":["a"]}`,
		`{"allConversations":1}`, `{"allConversations":"true"}`, `{"query":{"a":1}}`,
		"{\"query\":\"\xff\"}", `{"query":"x",}`, `{"query":"x"} x`,
	}
	for _, raw := range other {
		var got SearchParams
		if got.decodeFast([]byte(raw)) {
			t.Errorf("%s: decoded plainly (%+v), want encoding/json's path", raw, show(got))
		}
	}
}

// TestSearchParamsPlainRandom: params made of the fields' names (and
// others, in other cases), with values of every shape: whatever is decoded
// plainly is what encoding/json gives.
func TestSearchParamsPlainRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := []string{"turnMessage", "query", "agent", "episode", "conversation", "scope", "topK", "from", "to", "allConversations", "Query", "TOPK", "limit", "x"}
	values := []string{`""`, `null`, `"a"`, `"potos new"`, `"é✓"`, `"a\\b"`, `"\u0041"`, `0`, `5`, `-7`, `10.5`, `1e3`,
		`99999999999999999999`, `true`, `false`, `[1]`, `{"a":"b"}`, `" "`, `"<&>"`}
	plainly := 0
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		b.WriteByte('{')
		for k := rng.IntN(5); k > 0; k-- {
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + names[rng.IntN(len(names))] + `":` + values[rng.IntN(len(values))])
		}
		b.WriteByte('}')
		raw := []byte(b.String())
		var got SearchParams
		if !got.decodeFast(raw) {
			continue
		}
		plainly++
		want, err := searchParamsJSON(raw)
		if err != nil {
			t.Fatalf("%s: decoded plainly, but encoding/json says %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: plain %+v, encoding/json %+v", raw, show(got), show(want))
		}
	}
	if plainly < 2000 {
		t.Errorf("only %d of 20000 params decoded plainly", plainly)
	}
}

// FuzzSearchParamsPlain: whatever valid JSON is decoded plainly is what
// encoding/json gives.
func FuzzSearchParamsPlain(f *testing.F) {
	for _, s := range []string{`{}`, `{"query":"potos","topK":5}`, `{"query":"","allConversations":true,"to":"x"}`, `{"topK":-0}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // the stream reads no other message
		}
		var got SearchParams
		if !got.decodeFast(raw) {
			return
		}
		want, err := searchParamsJSON(raw)
		if err != nil {
			t.Fatalf("%q: decoded plainly, but encoding/json says %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: plain %+v, encoding/json %+v", raw, show(got), show(want))
		}
	})
}

// show is params with their pointers followed, for a test's message.
func show(p SearchParams) string {
	b, _ := json.Marshal(p)
	return string(b)
}
