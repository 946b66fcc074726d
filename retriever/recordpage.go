package retriever

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"runls/recordformat"
)

// Reading a page of run/records back from the files: the index keeps no
// text, so each file's records of the page are read in spans of lines (one
// read each, its byte range known from the file's line index), records
// close together in one span, and each record is checked against the table
// before it is given (a file rewritten since its update answers ErrChanged).

// spanGapLines is how many lines apart two records of a page may be and
// still be read in one span: reading a few KiB more costs less than
// another read.
const spanGapLines = 64

// readPicks reads the picked records into out (out[i] for picks[i]).
func (ix *Index) readPicks(ctx context.Context, q *recordsQuery, files []*fileState, agents []string, picks []recordPick, out []Record) error {
	byFile := make([][]int, len(files)) // the picks of each file
	for i, p := range picks {
		byFile[p.file] = append(byFile[p.file], i)
	}
	for f, idx := range byFile {
		if len(idx) == 0 {
			continue
		}
		fs := files[f]
		t := fs.records()
		path := ix.abs(fs.rel)
		uri := FileURI(path)
		slices.SortFunc(idx, func(a, b int) int { return picks[a].rec - picks[b].rec })
		for lo := 0; lo < len(idx); {
			if err := ctx.Err(); err != nil {
				return err
			}
			hi := lo + 1
			for hi < len(idx) && t.recLine(picks[idx[hi]].rec) <= t.recLast(picks[idx[hi-1]].rec)+spanGapLines {
				hi++
			}
			first, last := picks[idx[lo]].rec, picks[idx[hi-1]].rec
			from, to := t.recLine(first), t.recLast(last)+1
			lines, err := ix.readSpan(fs, from, to)
			if err != nil {
				return err
			}
			rt := &recordsText{fs: fs, from: first, firstRow: from, lines: lines}
			for _, i := range idx[lo:hi] {
				r, err := rt.record(picks[i].rec - first)
				if err != nil {
					return err
				}
				out[i] = ix.makeRecord(q, fs, path, uri, agents[f], picks[i], r)
			}
			lo = hi
		}
	}
	return nil
}

// makeRecord is the Record of a record read back.
func (ix *Index) makeRecord(q *recordsQuery, fs *fileState, path, uri, agent string, p recordPick, r recordText) Record {
	rec := Record{
		Location: Location{URI: uri, Range: r.rng},
		Agent:    agent,
		Episode:  fs.episode,
		Path:     path,
		File:     fs.rel,
		key:      p.key,
	}
	head := r.lines[0]
	if r.head.Kind == recordformat.Foreign {
		// A foreign log's record: its time in the one form of every layout
		// (recordformat.KeyText), its level; no state (spec §2).
		if r.head.Time != recordformat.NoTime {
			when := recordformat.KeyText(r.head.Time)
			rec.Time = &when
		}
		if lv := r.head.Level; lv != recordformat.None {
			name := levelNames[lv]
			rec.Level = &name
		}
	} else if r.head.Kind != recordformat.BeforeFirst {
		when := string(head[:recordformat.StampLen(head)])
		rec.Time = &when
		rec.State = ix.maskText(recordformat.ValidText(head[r.head.StateStart-r.head.Start : r.head.StateEnd-r.head.Start]))
		if lv := r.head.Level; lv != recordformat.None {
			name := levelNames[lv]
			rec.Level = &name
		}
	}
	if c := fs.records().recConv(p.rec); c != 0 {
		name := ix.maskText(ix.convName(c))
		rec.Conversation = &name
	}
	// Masked as a whole record, as it was indexed (spec §8: a key block over
	// several lines is one span).
	rec.Text = ix.maskText(r.evidence())
	if q.lines {
		rec.Lines = make([]string, len(r.lines))
		for i, l := range r.lines {
			rec.Lines[i] = string(l)
		}
		if ix.masker != nil {
			rec.Lines = maskLines(ix.masker, rec.Lines)
		}
	}
	return rec
}

// readSpan reads lines [from, to) of a file, without their line ends, in
// one read: from the line index's entry at or before from to the entry
// after to-1 (or the end of what was read of the file). A file that ends
// before line to-1 has changed since it was read.
func (ix *Index) readSpan(fs *fileState, from, to uint32) ([][]byte, error) {
	k := int(from / lineIndexEvery)
	if k >= len(fs.lineIndex) || to <= from {
		return nil, ErrChanged
	}
	start, end := fs.lineIndex[k], fs.readPos
	if e := int((to-1)/lineIndexEvery) + 1; e < len(fs.lineIndex) {
		end = fs.lineIndex[e]
	}
	if end < start {
		return nil, ErrChanged
	}
	h, err := ix.handles.acquire(ix, fs)
	if err != nil {
		return nil, err
	}
	defer ix.handles.release(h)
	buf := make([]byte, end-start)
	if n, err := h.f.ReadAt(buf, start); n < len(buf) {
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read %s: %w", fs.rel, err)
		}
		return nil, ErrChanged // it shrank
	}
	skip := int(from % lineIndexEvery)
	want := int(to - from)
	lines := make([][]byte, 0, want)
	for p := 0; len(lines) < want && p < len(buf); {
		nl := bytes.IndexByte(buf[p:], '\n')
		line := buf[p:]
		if nl >= 0 {
			line = buf[p : p+nl]
			p += nl + 1
		} else {
			p = len(buf) // the file's last line, without a line end
		}
		if skip > 0 {
			skip--
			continue
		}
		if nl >= 0 {
			line = bytes.TrimSuffix(line, []byte{'\r'})
		}
		lines = append(lines, line)
	}
	if len(lines) < want {
		return nil, ErrChanged
	}
	return lines, nil
}
