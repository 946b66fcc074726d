package retriever

import (
	"context"

	"runls/recordformat"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/records"
	"runls/retriever/internal/runfs"
)

// Reading a page of run/records back from the files: records.Stretches
// plans where (each file's records of the page in stretches of lines,
// records close together in one stretch), readLines reads each stretch in
// one read, and each record is checked against the table before it is
// given (a file rewritten since its update answers ErrChanged).

// readPicks reads the picked records into out (out[i] for picks[i]).
func (rb *readBack) readPicks(ctx context.Context, q *records.Query, ef episodeFiles, picks []records.Pick, out []Record) error {
	for _, st := range records.Stretches(ef.files, picks) {
		fs := ef.states[st.File]
		lines, err := rb.readLines(ctx, fs, st.From, st.To)
		if err != nil {
			return err
		}
		path := runfs.Abs(rb.root, fs.Rel)
		uri := FileURI(path)
		rt := &recordsText{fs: fs, from: st.First, firstRow: st.From, lines: lines}
		for _, i := range st.Picks {
			r, err := rt.record(picks[i].Rec - st.First)
			if err != nil {
				return err
			}
			out[i] = rb.makeRecord(q, fs, path, uri, ef.agents[st.File], picks[i], r)
		}
	}
	return nil
}

// makeRecord is the Record of a record read back.
func (rb *readBack) makeRecord(q *records.Query, fs *corpus.File, path, uri, agent string, p records.Pick, r recordText) Record {
	rec := Record{
		Location: Location{URI: uri, Range: r.rng},
		Agent:    agent,
		Episode:  fs.Episode(),
		Path:     path,
		File:     fs.Rel,
		key:      p.Key,
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
			name := records.LevelName(lv)
			rec.Level = &name
		}
	} else if r.head.Kind != recordformat.BeforeFirst {
		when := string(head[:recordformat.StampLen(head)])
		rec.Time = &when
		rec.State = rb.maskText(recordformat.ValidText(head[r.head.StateStart-r.head.Start : r.head.StateEnd-r.head.Start]))
		if lv := r.head.Level; lv != recordformat.None {
			name := records.LevelName(lv)
			rec.Level = &name
		}
	}
	if c := fs.Records().Conv(p.Rec); c != 0 {
		name := rb.maskText(rb.convs.Name(c))
		rec.Conversation = &name
	}
	// Masked as a whole record, as it was indexed (spec §8: a key block over
	// several lines is one span).
	rec.Text = rb.maskText(r.evidence())
	if q.Lines {
		rec.Lines = make([]string, len(r.lines))
		for i, l := range r.lines {
			rec.Lines[i] = string(l)
		}
		rec.Lines = rb.maskLines(rec.Lines)
	}
	return rec
}
