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
		b = appendJSONList(b, g.Records, appendLocation)
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
	return appendJSONList(b, list, func(b []byte, s *string) []byte { return appendJSONString(b, *s) })
}

// appendJSONList appends list as encoding/json writes a slice: null when
// nil, else its elements, each appended by elem, in brackets.
func appendJSONList[T any](b []byte, list []T, elem func([]byte, *T) []byte) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, &list[i])
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
