package rungen

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Appender appends realistic lines to existing or new files, for benchmarks and
// tests of incremental reading. It keeps its random stream and clock between calls,
// so successive appends differ and the timestamps move forward. Not safe for
// concurrent use.
type Appender struct {
	g *gen
}

// NewAppender returns an Appender whose words come from the vocabulary of
// opts (its Seed and VocabularySize).
func NewAppender(opts Options) *Appender {
	opts = opts.Defaults()
	v := NewVocabulary(opts.Seed, opts.VocabularySize)
	g := newGen(opts.Seed, 1<<63, v, sharedNoteLines(opts.Seed, v))
	g.unix = baseTime
	g.convs = opts.Conversations
	g.fielded = true
	return &Appender{g: g}
}

// Append appends n records to the file at path (created if missing) and returns the
// bytes written. The file's name says what to write: a `.history` or `.log` file gets
// fielded records of its kind (with continuation lines and stack traces as
// Generate writes them), the agent named after the file's folder; any other file
// gets n note lines.
func (a *Appender) Append(path string, n int) (int64, error) {
	if n < 0 {
		return 0, fmt.Errorf("rungen: append %d records: negative count", n)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, fmt.Errorf("rungen: append: %w", err)
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	g := a.g
	g.out = bw
	g.stats = fileStats{}
	g.err = nil
	name := filepath.Base(filepath.Dir(path))
	if name != "" {
		g.agent = strings.ToUpper(name[:1]) + name[1:]
	}
	switch filepath.Ext(path) {
	case ".history", ".log":
		g.logLine = filepath.Ext(path) == ".log"
		if g.logLine {
			g.msSep = '.'
		} else {
			g.msSep = 0
		}
		for i := 0; i < n && g.err == nil; i++ {
			g.advance()
			if g.r.IntN(20) == 0 {
				g.conv = g.r.IntN(g.convs + 1)
			}
			if g.logLine {
				g.logRecord()
			} else {
				g.historyRecord()
			}
		}
	default:
		for i := 0; i < n && g.err == nil; i++ {
			g.sentence(4 + g.r.IntN(20))
			g.newline(false)
		}
	}
	g.flush()
	werr := g.err
	if err := bw.Flush(); err != nil && werr == nil {
		werr = err
	}
	if err := f.Close(); err != nil && werr == nil {
		werr = err
	}
	if werr != nil {
		return g.stats.bytes, fmt.Errorf("rungen: append to %s: %w", path, werr)
	}
	return g.stats.bytes, nil
}

// Append appends n records to the file at path with a fresh Appender of seed
// (see Appender.Append). Callers that append many times should keep an Appender.
func Append(path string, n int, seed int64) (int64, error) {
	return NewAppender(Options{Seed: seed}).Append(path, n)
}
