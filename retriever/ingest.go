package retriever

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"runls/masking"
	"runls/recordformat"
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/records"
)

// ingester turns the bytes of one file, from a record start on, into pieces
// in a builder: it groups lines into records, reads them with the
// interpreter, masks them whole, cuts them into pieces and collects the
// file's diagnostics. What it cannot know to be final yet (the last record of
// a record file, which may still gain lines; a last line without a line end;
// a key block still open in a plain file) is added as tail docs, which the next
// read retracts and adds again.
type ingester struct {
	ix    *Index
	b     *corpus.Builder
	fs    *corpus.File
	convs map[string]uint32 // cache in front of the index's conversation table; nil until a record names one
	// scratch is the worker's, kept from file to file.
	scratch *ingestScratch
	masked  bool // a masker is on
	rules   bool // the interpreter applies (record file with rules)

	// position of the first byte of the buffer fed next
	pos    int64
	line   uint32
	parser recordformat.Parser
	// fed: a block was fed; whole: the first was at the file's start.
	fed, whole bool

	tailDocs []corpus.PendingDoc
}

// ingestScratch holds a worker's buffers that an ingester uses only while
// it feeds a block, kept from file to file.
type ingestScratch struct {
	lines []recordformat.Line // a plain file's lines in the block
	prose []byte              // a JSON line's prose (lineEvidence)
}

// readingOfFlag and flagOfReading map a piece's reading to its flag bits
// (corpus.FlagReadingMask) and back.
var readingOfFlag = [...]Reading{ReadingNote, ReadingTold, ReadingSaid, ReadingNote}

func flagOfReading(r Reading) uint8 {
	switch r {
	case ReadingTold:
		return 1
	case ReadingSaid:
		return 2
	}
	return 0
}

// lineIndexEvery is how far apart the lines are whose offsets a file keeps,
// to read a result's line without scanning far.
const lineIndexEvery = 16

// feed ingests buf, which starts at g.pos at a record start. When final is
// false, a trailing stretch that may still change (an incomplete record or line)
// is not ingested: feed returns how many bytes of buf it consumed, and the
// caller feeds the rest again with more bytes after it. When final is true,
// everything is ingested and the pending stretch becomes the file's tail.
func (g *ingester) feed(buf []byte, final bool) int {
	if !g.fed {
		g.fed, g.whole = true, g.pos == 0
	}
	if g.fs.Form.IsRecord() && !g.fs.LayoutSet {
		g.detect(buf)
	}
	if g.fs.Form.IsRecord() {
		return g.feedRecords(buf, final)
	}
	return g.feedNotes(buf, final)
}

func (g *ingester) feedRecords(buf []byte, final bool) int {
	var rec []recordformat.Line
	recStart, recLine, recIn := 0, g.line, g.parser.InRecord()
	line := g.line
	for start := 0; start < len(buf); {
		inBefore := g.parser.InRecord()
		l := g.parser.Next(buf, start)
		if l.End == len(buf) && l.End == l.TextEnd && !final {
			break // an incomplete last line
		}
		if l.Kind.StartsRecord() && len(rec) > 0 {
			g.emitRecord(buf, rec, recLine, false)
			rec = rec[:0]
			recStart, recLine, recIn = l.Start, line, inBefore
		}
		g.indexLine(line, g.pos+int64(l.Start))
		rec = append(rec, l)
		line++
		start = l.End
	}
	if final {
		if len(rec) > 0 {
			g.commit(recStart, recLine, recIn)
			g.emitRecord(buf, rec, recLine, true)
		} else {
			g.commit(len(buf), line, g.parser.InRecord())
		}
		if g.whole {
			g.fs.Table().Trim()
		}
		return len(buf)
	}
	// Hand the last record back: it is fed again with what follows it.
	g.parser = *recordformat.Resume(g.fs.Form, recIn)
	g.parser.SetLayout(g.fs.Layout)
	g.pos += int64(recStart)
	g.line = recLine
	return recStart
}

func (g *ingester) feedNotes(buf []byte, final bool) int {
	// Lines of a plain file are records of their own; a masker still sees the
	// lines around each line, so a key block pasted into a note is hidden whole.
	lines := g.scratch.lines[:0]
	defer func() { g.scratch.lines = lines[:0] }()
	for start := 0; start < len(buf); {
		l := g.parser.Next(buf, start)
		if l.End == len(buf) && l.End == l.TextEnd && !final {
			break
		}
		lines = append(lines, l)
		start = l.End
	}
	var m masking.Masker
	if g.masked {
		m = g.ix.masker
	}
	// Lines from an open key block on, and a last line without a line end, may
	// still change.
	spans, segStarts, pendingFrom := maskNoteLines(m, buf, lines, g.lineEvidence)
	if n := len(lines); n > 0 && lines[n-1].End == lines[n-1].TextEnd && pendingFrom > n-1 {
		pendingFrom = n - 1
	}
	if !final && pendingFrom < len(lines) {
		lines = lines[:pendingFrom]
	}
	commitAt := 0
	if len(lines) > 0 {
		commitAt = lines[len(lines)-1].End
	}
	for i, l := range lines {
		if final && i == pendingFrom {
			g.commit(l.Start, g.line, false)
		}
		g.indexLine(g.line, g.pos+int64(l.Start))
		if l.JSON && l.Level.LeftOut() {
			g.line++ // a JSON log's DEBUG and TRACE lines are left out (spec §3)
			continue
		}
		ev := g.lineEvidence(buf, l)
		var ls []masking.Span
		if spans != nil {
			ls = lineSpans(spans, segStarts[i], segStarts[i]+len(ev))
		}
		g.addText(ev, 0, len(ev), ls, g.line, l, 0, roleFlags(l), i >= pendingFrom)
		g.line++
	}
	if final {
		if pendingFrom >= len(lines) {
			g.commit(commitAt, g.line, false)
		}
		return len(buf)
	}
	g.pos += int64(commitAt)
	return commitAt
}

// detect decides a record file's layout from its head (spec §2 "Other
// layouts"): the first block read from its start, or, while the file held
// only empty lines, the block that first holds more (the records so far are
// none, so the layout may still be chosen).
func (g *ingester) detect(buf []byte) {
	if g.pos != 0 && g.fs.CommitLine > 0 && g.fs.Records().Len() > 0 {
		g.fs.LayoutSet = true // an own-layout record came first
		return
	}
	layout, ok := recordformat.Detect(g.fs.Form, buf)
	if !ok {
		return
	}
	g.fs.Layout, g.fs.LayoutSet = layout, true
	g.parser.SetLayout(layout)
	if layout.Foreign() && g.pos == 0 {
		first := buf
		if nl := bytes.IndexByte(buf, '\n'); nl >= 0 {
			first = bytes.TrimSuffix(buf[:nl], []byte("\r"))
		}
		g.fs.FirstUnits = uint32(recordformat.UTF16Len(first))
	}
}

// commit marks buffer offset at as the start of the pending tail: the file's
// committed position, line and parser state, with the diagnostics so far.
func (g *ingester) commit(at int, line uint32, inRecord bool) {
	fs := g.fs
	fs.CommitPos = g.pos + int64(at)
	fs.CommitLine = line
	fs.InRecord = inRecord
}

func (g *ingester) indexLine(line uint32, off int64) {
	if line%lineIndexEvery == 0 && int(line/lineIndexEvery) == len(g.fs.LineIndex) {
		g.fs.LineIndex = append(g.fs.LineIndex, off)
	}
}

// emitRecord ingests one record of a record file: its pieces, unless it is
// left out, then its entry in the file's record table.
func (g *ingester) emitRecord(buf []byte, rec []recordformat.Line, firstLine uint32, pending bool) {
	var conv uint32
	if rec[0].Kind == recordformat.Fielded {
		conv = g.convID(buf[rec[0].ConvStart:rec[0].ConvEnd])
	}
	before := g.b.Docs()
	outcome := g.emitPieces(buf, rec, firstLine, conv, pending)
	if outcome == records.OutcomeIndexed && g.b.Docs() == before {
		outcome = records.OutcomeNoTerms
	}
	g.fs.Table().Add(buf, rec, firstLine, conv, outcome, pending)
}

// emitPieces adds a record's pieces and tells what became of it: left out,
// masked (masking left no term), or indexed (which, with no piece added,
// means it has no term).
func (g *ingester) emitPieces(buf []byte, rec []recordformat.Line, firstLine uint32, conv uint32, pending bool) int {
	first := rec[0]
	var flags uint8
	if first.Kind.IsUnfielded() {
		flags |= corpus.FlagUnfielded
	}
	if first.Level.LeftOut() {
		return records.OutcomeLeftOut
	}
	// A foreign log's records are notes (spec §2): no rule reads them; a
	// transcript's role still does.
	rules := g.rules && !g.fs.Layout.Foreign()
	if !rules {
		flags |= roleFlags(first)
	}
	if !rules && !g.masked {
		for i, l := range rec {
			ev := g.lineEvidence(buf, l)
			g.addText(ev, 0, len(ev), nil, firstLine+uint32(i), l, conv, flags, pending)
		}
		return records.OutcomeIndexed
	}
	// The evidence text of the whole record: its lines joined with "\n".
	text, segStarts := joinEvidence(buf, rec, g.lineEvidence)
	reading, ms, me := ReadingNote, 0, len(text)
	if rules {
		reading, ms, me = g.ix.interpreter.Read(text)
		if reading == ReadingLeftOut {
			return records.OutcomeLeftOut
		}
	}
	flags |= flagOfReading(reading)
	var told uint64
	hasTold := reading == ReadingTold
	if hasTold {
		told = corpus.TextHashString(g.ix.state.Seed, strings.TrimSpace(text[ms:me]))
	}
	var spans []masking.Span
	if g.masked {
		spans, _ = g.ix.masker.Mask(text)
	}
	added := g.b.Docs()
	for i, l := range rec {
		s, e := segStarts[i], segEnd(text, segStarts, i)
		lo, hi := max(s, ms), min(e, me)
		if lo > hi || (lo == hi && lo != s) {
			continue
		}
		first := g.b.Docs()
		ev := g.lineEvidence(buf, l)
		g.addText(ev, lo-s, hi-s, lineSpans(spans, s, e), firstLine+uint32(i), l, conv, flags, pending)
		if hasTold {
			for d := first; d < g.b.Docs(); d++ {
				g.b.Cols.ToldHash.Set(uint32(d), told)
			}
		}
	}
	if len(spans) > 0 && g.b.Docs() == added && bm25.HasTerm(text[ms:me]) {
		return records.OutcomeMasked
	}
	return records.OutcomeIndexed
}

// lineSpans clips spans of a joined text to one line's segment [s, e) and
// makes them relative to it; a span over several lines hides its part of each.
func lineSpans(spans []masking.Span, s, e int) []masking.Span {
	var out []masking.Span
	for _, sp := range spans {
		if sp.End <= s || sp.Start >= e {
			if sp.Start >= e {
				break
			}
			continue
		}
		out = append(out, masking.Span{Start: max(sp.Start, s) - s, End: min(sp.End, e) - s, Placeholder: sp.Placeholder})
	}
	return out
}

// roleReading is the reading a JSON line's transcript role gives (spec §2
// "JSON lines": user told, assistant said), else a note's.
func roleReading(l recordformat.Line) Reading {
	switch l.Role {
	case recordformat.RoleUser:
		return ReadingTold
	case recordformat.RoleAssistant:
		return ReadingSaid
	}
	return ReadingNote
}

// roleFlags is roleReading as the pieces' flags hold it.
func roleFlags(l recordformat.Line) uint8 { return flagOfReading(roleReading(l)) }

// lineEvidence is line l's evidence text: a JSON line's prose, else the
// line from its evidence start (spec §2). A prose is the worker's scratch,
// valid until the next call.
func (g *ingester) lineEvidence(buf []byte, l recordformat.Line) []byte {
	return evidenceOf(&g.scratch.prose, buf, l)
}

// evidenceOf is line l's evidence text: a JSON line's prose, made in
// *prose (valid until its next use), else the line from its evidence start
// (spec §2). Indexing and shipping read a line's evidence through it.
func evidenceOf(prose *[]byte, buf []byte, l recordformat.Line) []byte {
	if l.JSON {
		*prose = recordformat.Prose((*prose)[:0], buf[l.Start:l.TextEnd])
		return *prose
	}
	return buf[l.Evidence:l.TextEnd]
}

// maskNoteLines masks the lines of a plain file as one text (a key block
// pasted over several lines is hidden whole) when m is not nil: the spans
// (of the joined text), where each line's evidence starts in it, and the
// first line of a key block still open at the end (len(lines) when none),
// which indexing leaves pending and shipping reads again with what follows.
func maskNoteLines(m masking.Masker, buf []byte, lines []recordformat.Line, evidence func([]byte, recordformat.Line) []byte) (spans []masking.Span, segStarts []int, openFrom int) {
	openFrom = len(lines)
	if m == nil || len(lines) == 0 {
		return nil, nil, openFrom
	}
	joined, segStarts := joinEvidence(buf, lines, evidence)
	spans, open := m.Mask(joined)
	if open >= 0 {
		for i := range lines {
			if i+1 == len(lines) || segStarts[i+1] > open {
				return spans, segStarts, i
			}
		}
	}
	return spans, segStarts, openFrom
}

// addText adds the pieces of ev[lo:hi], line l's evidence text (spans
// relative to ev). A JSON line's prose is cut at its own line ends, each
// prose line a piece or more, with offsets in the prose (flagProse).
func (g *ingester) addText(ev []byte, lo, hi int, spans []masking.Span, line uint32, l recordformat.Line, conv uint32, flags uint8, pending bool) {
	if !l.JSON {
		g.addPieces(ev, lo, hi, spans, line, uint32(l.Evidence-l.Start), conv, flags, pending)
		return
	}
	for a := lo; a <= hi; {
		b := hi
		if nl := bytes.IndexByte(ev[a:hi], '\n'); nl >= 0 {
			b = a + nl
		}
		g.addPieces(ev, a, b, spans, line, 0, conv, flags|corpus.FlagProse, pending)
		a = b + 1
	}
}

// joinEvidence joins the evidence text of lines (evidence gives a line's)
// with "\n", and gives where each line's part starts in the joined text:
// indexing and shipping join a record's lines the same way.
func joinEvidence(buf []byte, lines []recordformat.Line, evidence func([]byte, recordformat.Line) []byte) (string, []int) {
	var sb strings.Builder
	starts := make([]int, len(lines))
	for i, l := range lines {
		if i > 0 {
			sb.WriteByte('\n')
		}
		starts[i] = sb.Len()
		sb.Write(evidence(buf, l))
	}
	return sb.String(), starts
}

// segEnd is where line i's part of a joined evidence text ends.
func segEnd(text string, starts []int, i int) int {
	if i+1 < len(starts) {
		return starts[i+1] - 1
	}
	return len(text)
}

// maskRegion masks ev[lo:hi] with the spans (relative to ev) that fall in
// it: the masked text, its mapping back to the region, and whether any span
// applied (else text is the region itself). Indexing and shipping cut their
// pieces from it, so both hide the same characters.
func maskRegion(ev []byte, lo, hi int, spans []masking.Span) (text []byte, mapping masking.Mapping, masked bool) {
	region := ev[lo:hi]
	var rs []masking.Span
	for _, sp := range spans {
		if sp.End <= lo || sp.Start >= hi {
			continue
		}
		rs = append(rs, masking.Span{Start: max(sp.Start, lo) - lo, End: min(sp.End, hi) - lo, Placeholder: sp.Placeholder})
	}
	if len(rs) == 0 {
		return region, mapping, false
	}
	m, mapping := masking.Apply(string(region), rs)
	return []byte(m), mapping, true
}

// addPieces cuts ev[lo:hi] (a line's evidence text; evOff is where ev starts
// in the line) into pieces after masking it with spans (relative to ev), and
// adds each piece that has terms.
func (g *ingester) addPieces(ev []byte, lo, hi int, spans []masking.Span, line, evOff uint32, conv uint32, flags uint8, pending bool) {
	text, mapping, maskedLine := maskRegion(ev, lo, hi, spans)
	for start := 0; start < len(text); {
		end := pieceEnd(text, start)
		piece := text[start:end]
		if dl := g.b.Count(piece); dl > 0 {
			os, oe := start, end
			if maskedLine {
				os, oe = mapping.OriginalRange(start, end)
			}
			valid := piece
			if !utf8.Valid(piece) {
				valid = []byte(recordformat.ValidText(piece))
			}
			d := corpus.Piece{
				Hash:  corpus.PieceKey(g.ix.state.Seed, valid),
				File:  g.fs.ID,
				Line:  line,
				Start: evOff + uint32(lo+os),
				Blen:  uint32(oe - os),
				Conv:  conv,
				Flags: flags,
			}
			isMasked := maskedLine && string(piece) != string(ev[lo+os:lo+oe])
			if isMasked {
				d.Flags |= corpus.FlagMasked
			}
			var terms []int32
			if pending {
				terms = append([]int32(nil), g.b.PendingTerms()...)
			}
			doc, ok := g.b.AddPiece(d, g.fs.Agent)
			if !ok {
				// The batch is full: the read is discarded (see read).
				start = end
				continue
			}
			if isMasked {
				g.b.Cols.Masked.Set(doc, string(valid))
			}
			if pending {
				g.tailDocs = append(g.tailDocs, corpus.PendingDoc{Doc: doc, Terms: terms, DL: uint16(min(dl, 0xffff))})
			}
		}
		start = end
	}
}

// pieceEnd returns where the piece that starts at text[start] ends: after at
// most MaxPieceChars UTF-16 code units, never inside a surrogate pair.
func pieceEnd(text []byte, start int) int {
	if len(text)-start <= MaxPieceChars {
		return len(text) // at most one unit a byte
	}
	units := 0
	i := start
	for i < len(text) {
		c := text[i]
		size, u := 1, 1
		if c >= utf8.RuneSelf {
			var r rune
			r, size = utf8.DecodeRune(text[i:])
			u = recordformat.RuneUnits(r)
		}
		if units+u > MaxPieceChars {
			break
		}
		units += u
		i += size
	}
	return i
}

func (g *ingester) convID(b []byte) uint32 {
	if id, ok := g.convs[string(b)]; ok {
		return id
	}
	name := string(b)
	id := g.ix.state.Convs.ID(name)
	if g.convs == nil {
		g.convs = map[string]uint32{} // made for record files only
	}
	g.convs[name] = id
	if name != "-" {
		g.fs.AddConv(id)
	}
	return id
}
