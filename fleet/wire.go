package fleet

// This file holds an entry as the store keeps it (the fields of spec §16
// and the ones ranking needs; see doc.go) and back: a JSON line appended by
// hand (reflection's encoder was a fifth of a ship's CPU), the pieces'
// places in `loc`, the terms the store's word filter cannot find in `_msg`
// in `terms`.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"runls/internal/jsonappend"
	"runls/retriever"
)

// entryFields are the fields a candidate is read back with.
const entryFields = "_msg, run, episode, agent, form, unfielded, conversation, state, level, time_text, reading, path, line, loc"

// lineEncoder writes entries as JSON lines for VictoriaLogs'
// /insert/jsonline; it keeps its scratch space from line to line.
type lineEncoder struct {
	words   map[string]struct{}
	unfound []string
}

// appendEntry appends e as a JSON line. Stream fields: run, episode, agent.
func (w *lineEncoder) appendEntry(b []byte, e *Entry) []byte {
	b = append(b, `{"_msg":`...)
	b = appendString(b, e.Text)
	b = append(b, `,"_time":"`...)
	b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = appendField(b, "run", e.Run)
	b = appendField(b, "episode", e.Episode)
	b = appendField(b, "agent", e.Agent)
	if n, ok := retriever.EpisodeNumber(e.Episode); ok {
		b = appendField(b, "episode_n", n)
	}
	if e.RecordFile {
		b = appendField(b, "form", "record")
	} else {
		b = appendField(b, "form", "note")
	}
	if e.Unfielded {
		b = appendField(b, "unfielded", "1")
	}
	if e.Conversation != nil {
		b = appendField(b, "conversation", *e.Conversation)
	}
	for _, f := range [...]struct{ name, value string }{{"state", e.State}, {"level", e.Level}, {"time_text", e.TimeText}} {
		if f.value != "" {
			b = appendField(b, f.name, f.value)
		}
	}
	b = appendField(b, "reading", string(e.Reading))
	b = appendField(b, "path", e.Path)
	b = appendInt(b, "line", int64(e.Line)+1)
	b = appendInt(b, "offset", e.Offset)
	b = appendField(b, "record_id", e.RecordID)
	b = appendInt(b, "tokens", int64(e.Tokens))
	if t := w.storeTerms(e.Terms, e.Text, len(e.Pieces) == 1 && e.Pieces[0].TextStart == 0 && e.Pieces[0].TextEnd == len(e.Text)); t != "" {
		b = appendField(b, "terms", t)
	}
	b = append(b, `,"loc":"`...)
	b = appendLoc(b, e)
	return append(b, "\"}\n"...)
}

// appendLoc writes the pieces' places: a piece is "line,ts,te,bs,be,cs,ce"
// (its line, its bytes in _msg, its bytes and UTF-16 units in the line as
// written), pieces a ';' apart. The common record, one piece on the
// record's line that is the whole _msg, is written "bs,be" when its UTF-16
// range is its byte range, else "bs,be,cs,ce".
func appendLoc(b []byte, e *Entry) []byte {
	if len(e.Pieces) == 1 {
		p := e.Pieces[0]
		if p.Line == e.Line && p.TextStart == 0 && p.TextEnd == len(e.Text) {
			b = strconv.AppendInt(b, int64(p.ByteStart), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(p.ByteEnd), 10)
			if p.CharStart != p.ByteStart || p.CharEnd != p.ByteEnd {
				b = append(b, ',')
				b = strconv.AppendInt(b, int64(p.CharStart), 10)
				b = append(b, ',')
				b = strconv.AppendInt(b, int64(p.CharEnd), 10)
			}
			return b
		}
	}
	for i, p := range e.Pieces {
		if i > 0 {
			b = append(b, ';')
		}
		for j, v := range [7]int{int(p.Line), p.TextStart, p.TextEnd, p.ByteStart, p.ByteEnd, p.CharStart, p.CharEnd} {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(v), 10)
		}
	}
	return b
}

// appendField appends `,"name":"value"`.
func appendField(b []byte, name, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendInt appends `,"name":n`.
func appendInt(b []byte, name string, n int64) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, n, 10)
}

// appendString appends s as a JSON string, as encoding/json writes it
// without its HTML escapes.
func appendString(b []byte, s string) []byte { return jsonappend.String(b, s, false) }

// storeTerms returns the terms of distinct (runls' terms, a space apart)
// that the store's word filter cannot find in text: VictoriaLogs' words
// are runs of letters, digits and '_', as written, so "Deploy" and
// "deploy_db" do not hold the term "deploy". A record is found by a term t
// when text holds t as a word of the store's or its `terms` holds it.
//
// whole says text is one piece: its terms are then the parts of the
// store's words between '_', lower-cased, in order, and one pass over it
// tells (storeTermsOnePiece); else the store's words are put in a set.
func (w *lineEncoder) storeTerms(distinct, text string, whole bool) string {
	if whole {
		if out, ok := w.storeTermsOnePiece(distinct, text); ok {
			return out
		}
	}
	if w.words == nil || len(w.words) > 64 {
		w.words = make(map[string]struct{}, 32) // clearing costs the room a long record grew
	}
	clear(w.words)
	words := storeWords(w.words, text)
	var out []byte
	for rest := distinct; rest != ""; {
		t, after, _ := strings.Cut(rest, " ")
		rest = after
		if _, ok := words[t]; ok {
			continue
		}
		if len(out) > 0 {
			out = append(out, ' ')
		}
		out = append(out, t...)
	}
	return string(out)
}

// storeTermsOnePiece is storeTerms of an ASCII text that is one piece
// (ok false: not ASCII, or its terms are not distinct's). Walking the
// store's words in order, each part between '_' is the next term of the
// text; distinct lists the new ones in order, so a part is new exactly
// when it is distinct's next. A term stays in `terms` until a word of its
// own (no '_', no upper case) finds it.
func (w *lineEncoder) storeTermsOnePiece(distinct, text string) (string, bool) {
	w.unfound = w.unfound[:0]
	next := distinct // the new terms still to meet
	nextTerm := func() string {
		i := strings.IndexByte(next, ' ')
		if i < 0 {
			return next
		}
		return next[:i]
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c >= utf8.RuneSelf {
			return "", false
		}
		if storeWordByte[c] == 0 {
			i++
			continue
		}
		start, own := i, true
		for ; i < len(text) && text[i] < utf8.RuneSelf && storeWordByte[text[i]] != 0; i++ {
			own = own && storeWordByte[text[i]] == 1
		}
		if i < len(text) && text[i] >= utf8.RuneSelf {
			return "", false
		}
		word := text[start:i]
		if own {
			if t := nextTerm(); t == word && next != "" {
				next = strings.TrimPrefix(next[len(t):], " ")
			} else {
				w.unfound = slices.DeleteFunc(w.unfound, func(u string) bool { return u == word })
			}
			continue
		}
		for part := range strings.SplitSeq(word, "_") {
			if part == "" {
				continue
			}
			if t := nextTerm(); next != "" && len(t) == len(part) && asciiLowerEqual(part, t) {
				w.unfound = append(w.unfound, t)
				next = strings.TrimPrefix(next[len(t):], " ")
			}
		}
	}
	if next != "" {
		return "", false
	}
	return strings.Join(w.unfound, " "), true
}

// storeWordByte is, for an ASCII byte, 0 outside a store's word, 1 for a
// lower-case letter or digit, 2 for an upper-case letter or '_'.
var storeWordByte = func() (t [utf8.RuneSelf]byte) {
	for c := 0; c < utf8.RuneSelf; c++ {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			t[c] = 1
		case c >= 'A' && c <= 'Z' || c == '_':
			t[c] = 2
		}
	}
	return t
}()

// asciiLowerEqual reports whether the ASCII part, lower-cased, is t.
func asciiLowerEqual(part, t string) bool {
	for i := 0; i < len(part); i++ {
		c := part[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != t[i] {
			return false
		}
	}
	return true
}

// storeWords are the words of text as VictoriaLogs' tokenizer cuts it
// (lib/logstorage/tokenizer.go: letters, digits and '_', as written).
func storeWords(words map[string]struct{}, text string) map[string]struct{} {
	start := -1
	for i := 0; i < len(text); {
		c := text[i]
		size := 1
		word := false
		if c < utf8.RuneSelf {
			word = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(text[i:])
			word = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		if word && start < 0 {
			start = i
		} else if !word && start >= 0 {
			words[text[start:i]] = struct{}{}
			start = -1
		}
		i += size
	}
	if start >= 0 {
		words[text[start:]] = struct{}{}
	}
	return words
}

// entryOf reads a candidate back.
func entryOf(r map[string]string) (Entry, error) {
	e := Entry{
		Run: r["run"], Episode: r["episode"], Agent: r["agent"], Path: r["path"],
		RecordID: r["record_id"], TimeText: r["time_text"], Level: r["level"], State: r["state"],
		Reading: retriever.Reading(r["reading"]), RecordFile: r["form"] == "record",
		Unfielded: r["unfielded"] == "1", Text: r["_msg"],
	}
	if c, ok := r["conversation"]; ok && c != "" {
		e.Conversation = &c
	}
	if t, err := time.Parse(time.RFC3339Nano, r["_time"]); err == nil {
		e.Time = t
	}
	e.Offset = number(r["offset"])
	e.Tokens = int(number(r["tokens"]))
	if l := number(r["line"]); l > 0 {
		e.Line = uint32(l - 1)
	}
	if r["loc"] == "" {
		return e, nil
	}
	for _, s := range strings.Split(r["loc"], ";") {
		var v [7]int
		n := 0
		for f := range strings.SplitSeq(s, ",") {
			x, err := strconv.Atoi(f)
			if err != nil || n == 7 || x < 0 {
				n = -1
				break
			}
			v[n] = x
			n++
		}
		var p retriever.ShipPiece
		switch n {
		case 2, 4: // the record's one piece, its whole _msg
			p = retriever.ShipPiece{Line: e.Line, TextEnd: len(e.Text), ByteStart: v[0], ByteEnd: v[1], CharStart: v[0], CharEnd: v[1]}
			if n == 4 {
				p.CharStart, p.CharEnd = v[2], v[3]
			}
		case 7:
			p = retriever.ShipPiece{Line: uint32(v[0]), TextStart: v[1], TextEnd: v[2], ByteStart: v[3], ByteEnd: v[4], CharStart: v[5], CharEnd: v[6]}
		default:
			return Entry{}, fmt.Errorf("fleet: record %s of run %s has a bad piece %q", e.RecordID, e.Run, s)
		}
		if p.TextStart > p.TextEnd || p.TextEnd > len(e.Text) || (n == 2 || n == 4) && len(r["loc"]) != len(s) {
			return Entry{}, fmt.Errorf("fleet: record %s of run %s has a bad piece %q", e.RecordID, e.Run, s)
		}
		e.Pieces = append(e.Pieces, p)
	}
	return e, nil
}
