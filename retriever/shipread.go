package retriever

// This file holds the reading side of a ship (spec §16): ReadShip and its
// reader, which turn a file's bytes from a ship position into records with
// the index's own rules (record grouping and layouts, interpreter, masking,
// pieces and their terms), as ship.go's files are listed.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"runls/masking"
	"runls/recordformat"
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/records"
)

// shipBlock is how much of a file ReadShip reads at once; a record longer
// than that is read whole.
const shipBlock = 4 << 20

// ReadShip reads f from pos and calls fn with every record not shipped
// yet that has a piece (left-out records and records without terms are
// not shipped, as they are not indexed). With follow, a last line without
// a line end is left for later, as it may still grow. It returns the
// position to read from next time.
func (ix *Index) ReadShip(ctx context.Context, f ShipFile, pos ShipPos, follow bool, fn func(ShipRecord) error) (ShipPos, error) {
	file, err := ix.fsys.Open(filepath.FromSlash(f.Path))
	if err != nil {
		return pos, fmt.Errorf("ship %s: %w", f.Path, err)
	}
	defer file.Close()
	r := shipReader{ix: ix, f: f, fn: fn}
	// A buffer the size of what is left to read (most files are small: a
	// block each was most of a ship's allocation), one byte more so that
	// the first read sees the end; at most a block, grown for a record
	// longer than that.
	size := int64(shipBlock)
	if rest := f.Size - pos.Offset + 1; rest < size {
		size = max(rest, 4<<10)
	}
	buf := make([]byte, 0, size)
	for {
		if err := ctx.Err(); err != nil {
			return pos, err
		}
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), max(2*cap(buf), shipBlock))
			copy(grown, buf)
			buf = grown
		}
		n, rerr := file.ReadAt(buf[len(buf):cap(buf)], pos.Offset+int64(len(buf)))
		buf = buf[:len(buf)+n]
		eof := rerr == io.EOF || n == 0
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return pos, fmt.Errorf("ship %s: %w", f.Path, rerr)
		}
		next, consumed, err := r.feed(buf, pos, eof, follow)
		if err != nil {
			return pos, err
		}
		pos = next
		if eof {
			return pos, nil
		}
		// What is not settled is read again with what follows.
		buf = buf[:copy(buf, buf[consumed:])]
	}
}

// shipReader turns a file's bytes into ship records.
type shipReader struct {
	ix *Index
	f  ShipFile
	fn func(ShipRecord) error

	scan     bm25.Scanner
	seen     map[string]int32 // the record's distinct terms so far: the last piece holding each
	piece    int32            // the piece scanned, from 1 in each record
	distinct strings.Builder
	byPiece  strings.Builder // each piece's distinct terms (ShipRecord.PieceTerms)

	layout recordformat.Layout // a record file's, as read now
	prose  []byte              // a JSON line's prose (evidence)
}

// evidence is line l's evidence text: a JSON line's prose (valid until the
// next call), else the text from its evidence start (spec §2).
func (r *shipReader) evidence(buf []byte, l recordformat.Line) []byte {
	return evidenceOf(&r.prose, buf, l)
}

// lineText adds the pieces of ev[lo:hi], line l's evidence text, as
// addText does: a JSON line's prose is cut at its own line ends, each
// prose line's pieces placed at the whole line.
func (r *shipReader) lineText(out *ShipRecord, sb *strings.Builder, buf []byte, l recordformat.Line, ev []byte, lo, hi int, spans []masking.Span, line uint32) {
	lineText := buf[l.Start:l.TextEnd]
	if !l.JSON {
		r.pieces(out, sb, lineText, l.Evidence-l.Start, ev, lo, hi, spans, line, false)
		return
	}
	for a := lo; a <= hi; {
		b := hi
		if nl := bytes.IndexByte(ev[a:hi], '\n'); nl >= 0 {
			b = a + nl
		}
		r.pieces(out, sb, lineText, 0, ev, a, b, spans, line, true)
		if b < hi {
			sb.WriteByte('\n')
		}
		a = b + 1
	}
}

// feed reads buf, which starts at pos.Offset, and returns the position
// after what it settled and how many bytes of buf that was. The last
// record (record files) or the lines from an open key block on (plain
// files) stay unsettled unless eof: they are read again with more bytes.
func (r *shipReader) feed(buf []byte, pos ShipPos, eof, follow bool) (ShipPos, int, error) {
	if follow && eof {
		// A last line without a line end may still grow.
		if i := strings.LastIndexByte(string(buf), '\n'); i+1 < len(buf) {
			buf = buf[:i+1]
		}
	}
	if r.f.form.IsRecord() {
		if pos.Layout == 0 {
			// Decided from the file's head as the index decides it: a file
			// whose own records came first stays in the run's layout.
			layout, ok := recordformat.Detect(r.f.form, buf)
			if pos.Offset != 0 && pos.Line > 0 {
				layout, ok = recordformat.Own, true
			}
			if ok {
				pos.Layout = 1 + uint8(layout)
			}
		}
		return r.feedRecords(buf, pos, eof)
	}
	return r.feedNotes(buf, pos, eof)
}

// layout is the layout a record file is read in at pos (the run's own
// while undecided).
func (pos ShipPos) layout() recordformat.Layout {
	if pos.Layout == 0 {
		return recordformat.Own
	}
	l, _ := recordformat.LayoutOf(pos.Layout - 1)
	return l
}

func (r *shipReader) feedRecords(buf []byte, pos ShipPos, eof bool) (ShipPos, int, error) {
	p := recordformat.Resume(r.f.form, pos.InRecord)
	p.SetLayout(pos.layout())
	r.layout = pos.layout()
	var rec []recordformat.Line
	recStart, recLine, recIn := 0, pos.Line, pos.InRecord
	line := pos.Line
	skip := pos.Skip
	for start := 0; start < len(buf); {
		inBefore := p.InRecord()
		l := p.Next(buf, start)
		if l.Kind.StartsRecord() && len(rec) > 0 {
			if err := r.record(buf, pos.Offset, rec, recLine, skip); err != nil {
				return pos, 0, err
			}
			skip = 0
			rec = rec[:0]
			recStart, recLine, recIn = l.Start, line, inBefore
		}
		rec = append(rec, l)
		line++
		start = l.End
	}
	if len(rec) == 0 {
		return ShipPos{Offset: pos.Offset + int64(len(buf)), Line: line, InRecord: p.InRecord(), Layout: pos.Layout}, len(buf), nil
	}
	last := ShipPos{Offset: pos.Offset + int64(recStart), Line: recLine, InRecord: recIn, Skip: skip, Layout: pos.Layout}
	if !eof {
		// The last record may gain lines: it is read again with what follows.
		return last, recStart, nil
	}
	if err := r.record(buf, pos.Offset, rec, recLine, skip); err != nil {
		return pos, 0, err
	}
	last.Skip = len(rec)
	return last, recStart, nil
}

// record ships one record of a record file from its line skip on, read
// whole (interpreter, masking) as emitPieces reads it; buf starts at byte
// base of the file.
func (r *shipReader) record(buf []byte, base int64, rec []recordformat.Line, firstLine uint32, skip int) error {
	first := rec[0]
	if skip >= len(rec) || first.Level.LeftOut() {
		return nil
	}
	// A foreign log's records are notes (spec §2): no rule reads them; a
	// transcript's role still does.
	foreign := r.layout.Foreign()
	text, segStarts := joinEvidence(buf, rec, r.evidence)
	reading, ms, me := roleReading(first), 0, len(text)
	if r.ix.interpreter != nil && !foreign {
		reading, ms, me = r.ix.interpreter.Read(text)
		if reading == ReadingLeftOut {
			return nil
		}
	}
	var spans []masking.Span
	if r.ix.masker != nil {
		spans, _ = r.ix.masker.Mask(text)
	}
	out := ShipRecord{Reading: reading, Unfielded: first.Kind.IsUnfielded(), Foreign: foreign}
	if first.Kind == recordformat.Fielded {
		c := string(buf[first.ConvStart:first.ConvEnd])
		out.Conversation = &c
	}
	switch {
	case first.Kind == recordformat.Fielded || first.Kind == recordformat.Unfielded:
		head := buf[first.Start:first.TextEnd]
		out.Time = string(head[:recordformat.StampLen(head)])
		out.Level = records.LevelName(first.Level)
		out.State = string(buf[first.StateStart:first.StateEnd])
	case first.Kind == recordformat.Foreign:
		// As the record table shows it: its layout's time (with "." before
		// the milliseconds) and level.
		if first.Time != recordformat.NoTime {
			out.Time = records.FormatTimeKey(first.Time, true)
		}
		out.Level = records.LevelName(first.Level)
	}
	var sb strings.Builder
	started := false
	for i := skip; i < len(rec); i++ {
		l := rec[i]
		s, e := segStarts[i], segEnd(text, segStarts, i)
		lo, hi := max(s, ms), min(e, me)
		if lo > hi || (lo == hi && lo != s) {
			continue
		}
		if !started {
			out.Offset, out.Line, started = base+int64(l.Start), firstLine+uint32(i), true
		} else {
			sb.WriteByte('\n')
		}
		r.lineText(&out, &sb, buf, l, r.evidence(buf, l), lo-s, hi-s, lineSpans(spans, s, e), firstLine+uint32(i))
	}
	return r.emit(out, &sb, buf)
}

func (r *shipReader) emit(out ShipRecord, sb *strings.Builder, buf []byte) error {
	defer func() {
		if len(r.seen) > 64 {
			r.seen = nil // clearing costs the room a long record grew
		} else {
			clear(r.seen)
		}
		r.piece = 0
		r.distinct.Reset()
		r.byPiece.Reset()
	}()
	if len(out.Pieces) == 0 {
		return nil
	}
	out.Text = sb.String()
	out.Distinct = r.distinct.String()
	if len(out.Pieces) > 1 {
		out.PieceTerms = r.byPiece.String()
	}
	return r.fn(out)
}

// terms counts a piece's terms and adds the new ones to the record's and
// to the piece's.
func (r *shipReader) terms(piece string) int {
	if r.seen == nil {
		r.seen = map[string]int32{}
	}
	r.piece++
	n := 0
	r.scan.Each([]byte(piece), func(term []byte, _, _ uint64) {
		last, ok := r.seen[string(term)]
		if !ok {
			if r.distinct.Len() > 0 {
				r.distinct.WriteByte(' ')
			}
			r.distinct.Write(term)
		}
		if last != r.piece {
			r.seen[string(term)] = r.piece
			switch {
			case n == 0 && r.byPiece.Len() > 0:
				r.byPiece.WriteByte('\n')
			case n > 0:
				r.byPiece.WriteByte(' ')
			}
			r.byPiece.Write(term)
		}
		n++
	})
	return n
}

func (r *shipReader) feedNotes(buf []byte, pos ShipPos, eof bool) (ShipPos, int, error) {
	p := recordformat.NewParser(r.f.form)
	var lines []recordformat.Line
	for start := 0; start < len(buf); {
		l := p.Next(buf, start)
		lines = append(lines, l)
		start = l.End
	}
	// Lines from an open key block on are masked again, with the block's
	// start, when more is read.
	spans, segStarts, openFrom := maskNoteLines(r.ix.masker, buf, lines, r.evidence)
	settled := len(lines)
	if !eof {
		settled = openFrom
		if settled == len(lines) && settled > 0 {
			settled-- // the last line read may be cut by the block's end
		}
	}
	for i := pos.Skip; i < settled; i++ {
		l := lines[i]
		if l.JSON && l.Level.LeftOut() {
			continue // a JSON log's DEBUG and TRACE lines are left out (spec §3)
		}
		ev := r.evidence(buf, l)
		var ls []masking.Span
		if spans != nil {
			ls = lineSpans(spans, segStarts[i], segStarts[i]+len(ev))
		}
		out := ShipRecord{Reading: roleReading(l), Offset: pos.Offset + int64(l.Start), Line: pos.Line + uint32(i)}
		if l.JSON {
			// As the index shows a JSON line of a plain file: its fields'.
			tm, lv := jsonTimeAndLevel(buf[l.Start:l.TextEnd])
			if tm != nil {
				out.Time = *tm
			}
			if lv != nil {
				out.Level = *lv
			}
		}
		var sb strings.Builder
		r.lineText(&out, &sb, buf, l, ev, 0, len(ev), ls, pos.Line+uint32(i))
		if err := r.emit(out, &sb, buf); err != nil {
			return pos, 0, err
		}
	}
	// The next read starts at the open block's first line (or after the
	// settled lines), skipping what was shipped of it.
	from := min(openFrom, settled)
	next := ShipPos{Offset: pos.Offset, Line: pos.Line + uint32(from)}
	consumed := 0
	if from < len(lines) {
		consumed = lines[from].Start
	} else if len(lines) > 0 {
		consumed = lines[len(lines)-1].End
	}
	next.Offset += int64(consumed)
	next.Skip = max(settled, pos.Skip) - from
	return next, consumed, nil
}

// pieces cuts ev[lo:hi] (a line's evidence text, which starts at byte evOff
// of the line) into pieces after masking it with spans (relative to ev), as
// addPieces does, and adds each piece that has terms to out, its text to sb.
//
// A piece of a JSON line's prose (prose) is placed at the whole line.
func (r *shipReader) pieces(out *ShipRecord, sb *strings.Builder, lineText []byte, evOff int, ev []byte, lo, hi int, spans []masking.Span, line uint32, prose bool) {
	text, mapping, maskedLine := maskRegion(ev, lo, hi, spans)
	for start := 0; start < len(text); {
		end := pieceEnd(text, start)
		piece := recordformat.ValidText(text[start:end])
		ts := sb.Len()
		sb.WriteString(piece)
		if dl := r.terms(piece); dl > 0 {
			os, oe := start, end
			if maskedLine {
				os, oe = mapping.OriginalRange(start, end)
			}
			bs, be := evOff+lo+os, evOff+lo+oe
			if prose {
				bs, be = 0, len(lineText)
			}
			cs := recordformat.UTF16Len(lineText[:bs])
			out.Pieces = append(out.Pieces, ShipPiece{
				Line: line, TextStart: ts, TextEnd: sb.Len(),
				ByteStart: bs, ByteEnd: be,
				CharStart: cs, CharEnd: cs + recordformat.UTF16Len(lineText[bs:be]),
				Terms: dl,
			})
			out.Terms += dl
		}
		start = end
	}
}
