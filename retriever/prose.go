package retriever

import (
	"bytes"

	"runls/recordformat"
	"runls/retriever/internal/corpus"
)

// Reading back a piece: from its line as written, or, for a piece of a JSON
// line's prose (flagProse, spec §2 "JSON lines"), from the prose of that
// line read whole. Such a piece's location is the whole line.

// pieceSource reads back the line of the piece at p in fs, the byte range
// [start, end) of the line its location covers, and the piece's raw text,
// reading into *buf (readLine): line and raw are valid until its next use.
func (rb *readBack) pieceSource(fs *corpus.File, p pieceSpot, buf *[]byte) (line []byte, start, end int, raw []byte, err error) {
	off, n := int(p.off), int(p.n)
	if p.flags&corpus.FlagProse == 0 {
		line, err = rb.readLine(fs, p.line, off+n, false, buf)
		if err != nil || len(line) < off+n {
			return nil, 0, 0, nil, errChangedOr(err)
		}
		return line, off, off + n, line[off : off+n], nil
	}
	if line, err = rb.readWholeLine(fs, p.line, buf); err != nil {
		return nil, 0, 0, nil, err
	}
	prose := recordformat.Prose(nil, line)
	if len(prose) < off+n {
		return nil, 0, 0, nil, ErrChanged
	}
	return line, 0, len(line), prose[off : off+n], nil
}

// readWholeLine reads line n of fs to its end (without its line end), into
// *buf (readLine).
func (rb *readBack) readWholeLine(fs *corpus.File, n uint32, buf *[]byte) ([]byte, error) {
	for want := 64 << 10; ; want *= 4 {
		b, err := rb.readLine(fs, n, want, true, buf)
		if err != nil {
			return nil, err
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[:i]
		} else if len(b) >= want {
			continue // the line goes on
		}
		return bytes.TrimSuffix(b, []byte("\r")), nil
	}
}

// jsonTimeAndLevel is the time and level of a JSON line of a plain file,
// for its items (a record's come from its table).
func jsonTimeAndLevel(line []byte) (tm, level *string) {
	f, ok := recordformat.JSONLine(line)
	if !ok {
		return nil, nil
	}
	if f.Time != recordformat.NoTime {
		t := recordformat.KeyText(f.Time)
		tm = &t
	}
	if f.Level != recordformat.None {
		l := f.Level.String()
		level = &l
	}
	return tm, level
}

func errChangedOr(err error) error {
	if err != nil {
		return err
	}
	return ErrChanged
}
