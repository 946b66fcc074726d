package retriever

import (
	"strconv"

	"runls/internal/jsonappend"
)

// run/failures' answer as JSON, written by appending: at 1 GB the answer is
// 200 groups of up to 100 locations (some 370 KB), which encoding/json's
// reflection took 2–4 ms to write. The bytes are encoding/json's own
// (HTML characters escaped as \u003c…, invalid UTF-8 as \ufffd), which a
// test holds it to.

// appendFailures appends the JSON of groups as {"groups":[…]}.
func appendFailures(b []byte, groups []FailureGroup) []byte {
	if groups == nil {
		return append(b, `{"groups":null}`...)
	}
	b = append(b, `{"groups":[`...)
	for i := range groups {
		if i > 0 {
			b = append(b, ',')
		}
		g := &groups[i]
		b = append(b, `{"pattern":`...)
		b = appendJSONString(b, g.Pattern)
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, int64(g.Count), 10)
		b = append(b, `,"agents":`...)
		b = appendJSONStrings(b, g.Agents)
		b = append(b, `,"episodes":`...)
		b = appendJSONStrings(b, g.Episodes)
		b = append(b, `,"first":`...)
		b = appendJSONOptString(b, g.First)
		b = append(b, `,"last":`...)
		b = appendJSONOptString(b, g.Last)
		b = append(b, `,"records":`...)
		if g.Records == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for j := range g.Records {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendLocation(b, &g.Records[j])
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

func appendLocation(b []byte, l *Location) []byte {
	b = append(b, `{"uri":`...)
	b = appendJSONString(b, l.URI)
	b = append(b, `,"range":{"start":{"line":`...)
	b = strconv.AppendInt(b, int64(l.Range.Start.Line), 10)
	b = append(b, `,"character":`...)
	b = strconv.AppendInt(b, int64(l.Range.Start.Character), 10)
	b = append(b, `},"end":{"line":`...)
	b = strconv.AppendInt(b, int64(l.Range.End.Line), 10)
	b = append(b, `,"character":`...)
	b = strconv.AppendInt(b, int64(l.Range.End.Character), 10)
	return append(b, "}}}"...)
}

func appendJSONStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

func appendJSONOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

// appendJSONString appends s quoted as encoding/json quotes it.
func appendJSONString(b []byte, s string) []byte { return jsonappend.String(b, s, true) }
