package lsp

// This file decodes the requests and notifications editors send, in the
// shape they send them, without jsonrpc2.DecodeMessage: that makes a JSON
// decoder a message, whose first read takes a 32 KiB buffer, zeroed (a
// third of what `runls serve` allocated to answer a cheap run/search, and
// the collector's work with it; issue 33). Anything else goes to
// jsonrpc2.DecodeMessage, as every message did before.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
)

// decodeFast decodes a valid JSON body (the caller has checked it) that is
// a call or a notification in the plain shape: an object of "jsonrpc":
// "2.0", "method" (a non-empty string of UTF-8 without escapes), "params" (any value
// but null, compact: no space between tokens, no '<', '>', '&' nor U+2028,
// U+2029 anywhere, so that jsonrpc2 keeps its bytes as they are) and, for
// a call, "id" (an integer of 32 bits, or a string of UTF-8 without escapes), each
// once, nothing else. It reports false for any other body, which
// jsonrpc2.DecodeMessage then decodes (or refuses) as before; what it
// decodes is what that gives (FuzzDecodeFast).
func decodeFast(body []byte) (jsonrpc2.Message, bool) {
	if len(body) > maxFastBody {
		return nil, false
	}
	var version, method, params, id []byte
	ok := objectMembers(body, func(key, value []byte) bool {
		var slot *[]byte
		switch string(key) {
		case "jsonrpc":
			slot = &version
		case "method":
			slot = &method
		case "params":
			slot = &params
		case "id":
			slot = &id
		default:
			return false
		}
		if *slot != nil {
			return false // given twice
		}
		*slot = value
		return true
	})
	if !ok {
		return nil, false
	}
	if string(version) != `"2.0"` || !plainString(method) || len(method) == 2 || params == nil || !compactParams(params) {
		return nil, false
	}
	name := string(method[1 : len(method)-1])
	raw := json.RawMessage(params)
	if id == nil {
		n, err := jsonrpc2.NewNotification(name, raw)
		return n, err == nil && bytes.Equal(n.Params(), params)
	}
	var rid jsonrpc2.ID
	switch {
	case plainString(id):
		rid = jsonrpc2.NewStringID(string(id[1 : len(id)-1]))
	case isInteger(id):
		n, err := strconv.ParseInt(string(id), 10, 32)
		if err != nil {
			return nil, false
		}
		rid = jsonrpc2.NewNumberID(int32(n))
	default:
		return nil, false
	}
	c, err := jsonrpc2.NewCall(rid, name, raw)
	return c, err == nil && bytes.Equal(c.Params(), params)
}

// objectMembers calls member with each key (its bytes between the quotes,
// escapes as they are) and value of the JSON object b, in order, and
// reports whether b is that object alone and member took every member:
// false as soon as member refuses one. b is valid JSON (the stream reads no
// other message); the two fast decoders (decodeFast, SearchParams') walk
// their objects with it.
func objectMembers(b []byte, member func(key, value []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		kEnd := stringEnd(b, i)
		if kEnd-1 <= i { // a quote that ends the body opens no key
			return false
		}
		key := b[i+1 : kEnd-1]
		i = skipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		v := skipSpace(b, i+1)
		end := valueEnd(b, v)
		if end < 0 || !member(key, b[v:end]) {
			return false
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return skipSpace(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
}

// maxFastBody bounds the bodies decodeFast reads: a request's params are
// small, and a large body (a didOpen's whole file) costs the decoder's
// buffer nothing beside its own size, where the checks here would read it
// twice more (a 10 MB didOpen: 140 ms against jsonrpc2's 26 ms).
const maxFastBody = 16 << 10

// skipSpace returns the first index from i of b that is not JSON space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the closing quote of the string that
// starts at b[i] (a quote), or len(b).
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index after the JSON value that starts at b[i], in
// a body that is valid JSON, or -1.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// plainString reports whether v is a JSON string of UTF-8 without escapes
// (jsonrpc2 would write U+FFFD for a byte that is not UTF-8).
func plainString(v []byte) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	in := v[1 : len(v)-1]
	return bytes.IndexByte(in, '\\') < 0 && bytes.IndexByte(in, '"') < 0 && utf8.Valid(in)
}

// isInteger reports whether v is a JSON number without fraction or exponent.
func isInteger(v []byte) bool {
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// compactParams reports whether jsonrpc2 keeps params' bytes as they are
// when it makes a message of them (it compacts them and escapes HTML's
// characters): not null, no space between tokens, none of '<', '>', '&',
// U+2028 and U+2029.
func compactParams(v []byte) bool {
	if string(v) == "null" || bytes.IndexAny(v, "<>&") >= 0 || bytes.Contains(v, []byte("\u2028")) || bytes.Contains(v, []byte("\u2029")) {
		return false
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			i = stringEnd(v, i) - 1
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return true
}
