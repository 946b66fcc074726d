package fleet

// The hand-written JSON lines and the terms the store's word filter cannot
// find, against brute force: encoding/json, and the store's words in a set.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"runls/retriever"
)

// runlsTerms are text's distinct terms (spec §6: runs of letters and
// digits, lower-cased) in first-seen order, a space apart.
func runlsTerms(text string) string {
	seen := map[string]bool{}
	var out []string
	var cur []rune
	end := func() {
		if len(cur) > 0 && !seen[string(cur)] {
			seen[string(cur)] = true
			out = append(out, string(cur))
		}
		cur = cur[:0]
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			cur = append(cur, unicode.ToLower(r))
			continue
		}
		end()
	}
	end()
	return strings.Join(out, " ")
}

func FuzzStoreTerms(f *testing.F) {
	for _, s := range []string{"Alice said: deploy the deploy_db now", "DEPLOY deploy", "a_b A_B ab", "x__y _ __", "Straße straße", "é_é", "The the THE", "id_1 1 id", "\xff bad utf8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		distinct := runlsTerms(text)
		var w lineEncoder
		slow := w.storeTerms(distinct, text, false)
		fast := w.storeTerms(distinct, text, true)
		if fast != slow {
			t.Fatalf("%q: one pass gives %q, the set %q", text, fast, slow)
		}
		// What it means: every term is a store's word of text or in the
		// result, and no term of the result is a word.
		words := storeWords(map[string]struct{}{}, text)
		in := map[string]bool{}
		for _, u := range strings.Fields(slow) {
			in[u] = true
			if _, ok := words[u]; ok {
				t.Fatalf("%q: %q is a word of the store's and in terms", text, u)
			}
		}
		for _, d := range strings.Fields(distinct) {
			if _, ok := words[d]; !ok && !in[d] {
				t.Fatalf("%q: %q is neither a word of the store's nor in terms %q", text, d, slow)
			}
		}
	})
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"uote\\back", "tab\tnl\ncr\r", "\x00\x1f\x7f", "é €", "\xff\xfe", "\u2028\u2029", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q: %s is not a JSON string: %v", s, b, err)
		}
		want, _ := json.Marshal(s)
		var w string
		_ = json.Unmarshal(want, &w)
		if got != w {
			t.Fatalf("%q: reads back %q, encoding/json's %q", s, got, w)
		}
	})
}

// TestLocShort: a record of one piece that is its whole _msg writes its
// place in two or four numbers, and reads back as written.
func TestLocShort(t *testing.T) {
	text := "deploy été"
	for _, tt := range []struct {
		p    [7]int
		want string
	}{
		{[7]int{4, 0, len(text), 30, 30 + len(text), 30, 30 + len(text)}, "30,42"},
		{[7]int{4, 0, len(text), 30, 30 + len(text), 28, 38}, "30,42,28,38"},
		{[7]int{5, 0, len(text), 30, 42, 30, 42}, "5,0,12,30,42,30,42"},
	} {
		e := Entry{Line: 4, Text: text, Pieces: []retriever.ShipPiece{{Line: uint32(tt.p[0]), TextStart: tt.p[1], TextEnd: tt.p[2], ByteStart: tt.p[3], ByteEnd: tt.p[4], CharStart: tt.p[5], CharEnd: tt.p[6]}}}
		if got := string(appendLoc(nil, &e)); got != tt.want {
			t.Errorf("loc %v: %q, want %q", tt.p, got, tt.want)
		}
		back, err := entryOf(map[string]string{"_msg": text, "line": "5", "loc": tt.want})
		if err != nil || len(back.Pieces) != 1 || back.Pieces[0] != e.Pieces[0] {
			t.Errorf("loc %q reads back %+v, %v; want %+v", tt.want, back.Pieces, err, e.Pieces[0])
		}
	}
	for _, bad := range []string{"1", "1,2,3", "1,2;3,4", "0,0,99,1,2,3,4", "a,b"} {
		if _, err := entryOf(map[string]string{"_msg": text, "line": "5", "loc": bad}); err == nil {
			t.Errorf("loc %q: no error", bad)
		}
	}
}

// TestEntryTime: an entry's _time is its record's time as written, read as
// UTC; a record without a time, or with a time without its year (syslog,
// logcat), has its file's modification time (spec §16).
func TestEntryTime(t *testing.T) {
	mtime := time.Date(2026, 11, 3, 9, 30, 0, 0, time.UTC)
	f := retriever.ShipFile{Path: "episode-1/a/a.log", Episode: "episode-1", Agent: "a", Records: true, ModTime: mtime}
	for _, tt := range []struct {
		text string
		want time.Time
	}{
		{"2026-10-21 18:00:02,123", time.Date(2026, 10, 21, 18, 0, 2, 123e6, time.UTC)},
		{"2026-10-21 18:00:02.5", time.Date(2026, 10, 21, 18, 0, 2, 0, time.UTC)}, // the seconds read, an odd fraction not
		{"2026-10-21 18:00:02", time.Date(2026, 10, 21, 18, 0, 2, 0, time.UTC)},
		{"0000-03-02 10:15:01.000", mtime},
		{"", mtime},
	} {
		e := entryOfRecord("r", f, "id", retriever.ShipRecord{Time: tt.text})
		want := tt.want
		if !e.Time.Equal(want) {
			t.Errorf("%q: _time %v, want %v", tt.text, e.Time, want)
		}
		line := string(new(lineEncoder).appendEntry(nil, &e))
		if !strings.Contains(line, `"_time":"`+want.Format(time.RFC3339Nano)+`"`) {
			t.Errorf("%q: line %s lacks _time %v", tt.text, line, want)
		}
	}
}
