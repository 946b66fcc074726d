package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The command line's warnings on stderr (spec §10): plain lines in the shape
// of its notes, `runls: warning: message (key: value, …)`, never the
// logger's encoding (no tab-separated level, no JSON of fields). Errors the
// engine logs read `runls: error: …`; below WARN nothing is printed.

// cliLogger is the engine's logger for the command line: WARN and above,
// to w, one plain line each.
func cliLogger(w io.Writer) *zap.Logger {
	return zap.New(&plainCore{w: w, mu: &sync.Mutex{}})
}

type plainCore struct {
	w      io.Writer
	mu     *sync.Mutex // shared by the cores With makes: one line at a time
	fields []zapcore.Field
}

func (c *plainCore) Enabled(l zapcore.Level) bool { return l >= zapcore.WarnLevel }

func (c *plainCore) With(fields []zapcore.Field) zapcore.Core {
	return &plainCore{w: c.w, mu: c.mu, fields: append(c.fields[:len(c.fields):len(c.fields)], fields...)}
}

func (c *plainCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *plainCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	line := plainLine(e, append(c.fields[:len(c.fields):len(c.fields)], fields...))
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := io.WriteString(c.w, line)
	return err
}

func (c *plainCore) Sync() error { return nil }

// plainLine renders one entry: its level as a word, its message, then its
// fields in the order given.
func plainLine(e zapcore.Entry, fields []zapcore.Field) string {
	word := "warning"
	if e.Level > zapcore.WarnLevel {
		word = "error"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "runls: %s: %s", word, e.Message)
	for i, f := range fields {
		enc := zapcore.NewMapObjectEncoder()
		f.AddTo(enc)
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString(", ")
		}
		v, ok := enc.Fields[f.Key]
		if !ok {
			v = enc.Fields // a namespace or an inline object
		}
		fmt.Fprintf(&b, "%s: %v", f.Key, v)
	}
	if len(fields) > 0 {
		b.WriteString(")")
	}
	b.WriteString("\n")
	return b.String()
}
