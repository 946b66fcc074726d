package retriever

import (
	"bytes"
	"context"
	"sync"
	"unicode/utf8"

	"runls/recordformat"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/persist"
	"runls/retriever/internal/records"
)

// Which unindented continuations are stack traces (spec §9, revision 3): a
// record whose unindented continuation lines are all stack-trace lines gets
// a Hint naming its exception, not a Warning. The record table keeps where
// those lines are, not what they say, so the spans are read back once: what
// is found is kept with the file (fileState.memo), shared by the versions
// of one reading of it, for every span but the last (which may still grow).

// fileMemo is what was found by reading a file's records back.
type fileMemo struct {
	failures failMemo
	warnings failMemo // filled once a request asks for WARN (failures.go)
	traces   traceMemo
}

// memoOf returns the memo kept with fs (nil: none): the committed file
// state holds it without knowing what it holds.
func memoOf(fs *corpus.File) *fileMemo {
	m, _ := fs.Memo().(*fileMemo)
	return m
}

// fileRules are what the cache's state codec asks of the retriever to make
// file states (persist.FileRules).
func fileRules() persist.FileRules {
	return persist.FileRules{EpisodeNumber: EpisodeNumber, NewMemo: newFileMemo}
}

// newFileMemo is the memo a file of form f keeps: none for a note, which
// has no records to read back (failures and stack traces are records').
func newFileMemo(f recordformat.Form) any {
	if !f.IsRecord() {
		return nil
	}
	return &fileMemo{}
}

// traceFacts is what a span's lines say: whether every line is a
// stack-trace line, and which is the first exception line (line+1; 0:
// none), read again when a Hint is worded (exceptionOf). The memo kept
// the line's text, masked: after a 100,000-file reopen some 45,000 spans'
// exception lines were 5 MB of the heap, for the few Hints a client is sent
// (issue 33).
type traceFacts struct {
	all       bool
	exception uint32
}

// traceMemo keeps the facts of a file's spans [0, len(facts)).
type traceMemo struct {
	mu    sync.Mutex
	facts []traceFacts
}

// maxExceptionBytes bounds the exception line a Hint's message begins with.
const maxExceptionBytes = 200

// stackTraces returns the facts of each span of fs (spans: its spans, in
// order, the last maybe still growing; index: its line index, fs.Lines()
// or the one a view borrowed, corpus.File.ColumnsOnce). A span that cannot be read (the file
// changed since it was indexed) is no stack trace until it is read again.
func (rb *readBack) stackTraces(fs *corpus.File, index []int64, spans []records.Span) []traceFacts {
	out := make([]traceFacts, len(spans))
	final := len(spans) - 1 // the last may still grow
	var m *traceMemo
	if memo := memoOf(fs); memo != nil {
		m = &memo.traces
		m.mu.Lock()
		defer m.mu.Unlock()
		n := copy(out, m.facts)
		for i := n; i < len(spans); i++ {
			f, ok := rb.readTrace(fs, index, spans[i])
			out[i] = f
			if ok && i < final && i == len(m.facts) {
				m.facts = append(m.facts, f)
			}
		}
		return out
	}
	for i, sp := range spans {
		out[i], _ = rb.readTrace(fs, index, sp)
	}
	return out
}

// readTrace reads one span's lines and says what they are.
func (rb *readBack) readTrace(fs *corpus.File, index []int64, sp records.Span) (f traceFacts, ok bool) {
	rb.withScratch(func(sc *lineScratch) {
		lines, err := rb.readLinesInto(context.Background(), fs, index, sp.First, sp.Last+1, sc)
		if err == nil {
			f, ok = traceOf(lines, sp.First), true
		}
	})
	return f, ok
}

// traceOf is what the lines of a span, from its line first, say; it keeps
// none of them.
func traceOf(lines [][]byte, first uint32) traceFacts {
	f := traceFacts{all: true}
	for i, l := range lines {
		if len(l) == 0 || bytes.HasPrefix(l, []byte("  ")) {
			continue // an empty or indented line of the record is no unindented one
		}
		if !recordformat.IsStackTraceLine(l) {
			return traceFacts{}
		}
		if _, ok := recordformat.ThrownName(l); ok && f.exception == 0 {
			f.exception = first + uint32(i) + 1
		}
	}
	return f
}

// exceptionOf is the exception line f names, as a Hint's message begins
// with it (exceptionText, masked): "" when it names none, or when the line
// no longer reads as one (the file changed since its span was read).
func (rb *readBack) exceptionOf(fs *corpus.File, index []int64, f traceFacts) string {
	if f.exception == 0 {
		return ""
	}
	var text string
	rb.withScratch(func(sc *lineScratch) {
		lines, err := rb.readLinesInto(context.Background(), fs, index, f.exception-1, f.exception, sc)
		if err != nil || len(lines) != 1 {
			return
		}
		if _, ok := recordformat.ThrownName(lines[0]); ok {
			text = rb.maskText(exceptionText(lines[0]))
		}
	})
	return text
}

// exceptionText is an exception line as a message begins with it: trimmed,
// at most maxExceptionBytes (cut at a character, with "…").
func exceptionText(line []byte) string {
	text := recordformat.ValidText(bytes.TrimSpace(line))
	if len(text) > maxExceptionBytes {
		cut := maxExceptionBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return text
}
