package retriever

import (
	"math"
	"strconv"
)

// run/search's answer as JSON, written by appending: the server writes one
// an answer, and encoding it by reflection (jsonrpc2's marshal) was a
// share of what a cheap search costs over the protocol's round trip
// (issue 33). The bytes are encoding/json's own, which a test holds it to.

// EncodedJSON is the result's JSON as encoding/json writes it, or nil when
// a score is not a finite number (which encoding/json refuses: the caller
// then encodes it as it would any value, and gets its error).
func (r *Result) EncodedJSON() []byte {
	b, _ := r.AppendJSON(make([]byte, 0, 1024*(1+len(r.Items))))
	return b
}

// AppendJSON appends the result's JSON, as EncodedJSON gives it, to b
// (the server writes it after its frame's head, in one buffer); nil and
// false when a score is not a finite number (EncodedJSON's nil).
func (r *Result) AppendJSON(b []byte) ([]byte, bool) {
	for i := range r.Items {
		if s := r.Items[i].Score; math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, false
		}
	}
	return appendResult(b, r), true
}

// appendResult appends r's JSON as {"items":[…],"hidden":{…},"notices":[…]}.
func appendResult(b []byte, r *Result) []byte {
	b = append(b, `{"items":`...)
	b = appendJSONList(b, r.Items, appendItem)
	b = append(b, `,"hidden":{`...)
	h := r.Hidden
	first := true
	for _, f := range [...]struct {
		name string
		n    int
	}{{"scope", h.Scope}, {"noContext", h.NoContext}, {"unfielded", h.Unfielded}, {"otherConversation", h.OtherConversation}} {
		if f.n == 0 {
			continue // omitempty
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, f.name...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(f.n), 10)
	}
	b = append(b, `},"notices":`...)
	b = appendJSONList(b, r.Notices, appendNotice)
	return append(b, '}')
}

// appendNotice appends a notice's JSON, its fields in Notice's order.
func appendNotice(b []byte, n *Notice) []byte {
	b = append(b, `{"field":`...)
	b = appendJSONString(b, n.Field)
	b = append(b, `,"value":`...)
	b = appendJSONString(b, n.Value)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, n.Message)
	b = append(b, `,"suggestion":`...)
	b = appendJSONOptString(b, n.Suggestion)
	return append(b, '}')
}

// appendItem appends an item's JSON, its fields in Item's order.
func appendItem(b []byte, it *Item) []byte {
	b = append(b, `{"location":`...)
	b = appendLocation(b, &it.Location)
	b = append(b, `,"score":`...)
	b = appendJSONFloat(b, it.Score)
	b = append(b, `,"text":`...)
	b = appendJSONString(b, it.Text)
	b = append(b, `,"agent":`...)
	b = appendJSONString(b, it.Agent)
	b = append(b, `,"episode":`...)
	b = appendJSONString(b, it.Episode)
	b = append(b, `,"conversation":`...)
	b = appendJSONOptString(b, it.Conversation)
	b = append(b, `,"reading":`...)
	b = appendJSONString(b, string(it.Reading))
	b = append(b, `,"time":`...)
	b = appendJSONOptString(b, it.Time)
	b = append(b, `,"level":`...)
	b = appendJSONOptString(b, it.Level)
	b = append(b, `,"matches":`...)
	b = appendJSONList(b, it.Matches, func(b []byte, m *[2]int) []byte {
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(m[0]), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(m[1]), 10)
		return append(b, ']')
	})
	return append(b, '}')
}

// appendJSONFloat appends a finite float64 as encoding/json writes it: the
// shortest decimal that reads back the same, in exponent form below 1e-6
// and from 1e21 (with a one-digit negative exponent, e-7 not e-07).
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
