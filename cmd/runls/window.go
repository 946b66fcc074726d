package main

import (
	"io"
	"strings"
	"unicode/utf8"

	"runls/recordformat"
)

// Long pieces in `runls search`'s text output (spec §10): a piece wider
// than the columns left after its `path:line:column: ` prefix is printed as
// a window around its first match, `…` where it was cut. Columns are
// counted a character each.

// pipeColumns is the text width when stdout is not a terminal.
const pipeColumns = 200

// minWindow is the fewest columns a window gets, however narrow the
// terminal or long the prefix.
const minWindow = 40

// outputColumns is the width of the terminal w writes to, or pipeColumns
// when it is none.
func outputColumns(w io.Writer) (cols int, terminal bool) {
	if n, ok := terminalColumns(w); ok && n > 0 {
		return n, true
	}
	return pipeColumns, false
}

// pieceWindow returns text cut to at most width characters around its
// first match (UTF-16 ranges within text, as Item.Matches), with `…` on
// each side that was cut; text that fits is returned as it is.
func pieceWindow(text string, matches [][2]int, width int) string {
	n := utf8.RuneCountInString(text)
	if n <= width {
		return text
	}
	width = max(width, 3)
	// The first match in characters.
	ms, me := 0, 0
	if len(matches) > 0 {
		ms = runeIndex(text, matches[0][0])
		me = runeIndex(text, matches[0][1])
	}
	room := width - 2 // both sides cut: one `…` each
	start := ms - max(0, room-(me-ms))/3
	if me-ms >= room {
		start = ms
	}
	start = max(0, start)
	if start == 0 {
		room++ // nothing cut before
	}
	end := start + room
	if end >= n {
		end = n
		start = max(0, n-(width-1))
	}
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	b.WriteString(runeSlice(text, start, end))
	if end < n {
		b.WriteString("…")
	}
	return b.String()
}

// runeIndex is the character index of UTF-16 offset u in s.
func runeIndex(s string, u int) int {
	units, i := 0, 0
	for _, r := range s {
		if units >= u {
			return i
		}
		units += recordformat.RuneUnits(r)
		i++
	}
	return i
}

// runeSlice is s's characters [from, to).
func runeSlice(s string, from, to int) string {
	i, bs, be := 0, len(s), len(s)
	for off := range s {
		if i == from {
			bs = off
		}
		if i == to {
			be = off
			break
		}
		i++
	}
	return s[bs:be]
}
