package recordformat

import (
	"fmt"
	"strings"
	"testing"
)

// benchLog is lines as the run writes them, with a stack trace now and then.
func benchLog() []byte {
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "2026-10-21 18:%02d:%02d,%03d INFO  [running] [conv-%d] Alice said: step %d of the plan is done, moving on to the next one\n", i/60%60, i%60, i%1000, i%7, i)
		if i%50 == 0 {
			b.WriteString("java.lang.IllegalStateException: boom\n\tat x.Y.z(Y.java:1)\n")
		}
	}
	return []byte(b.String())
}

// BenchmarkParseOwn: the run's own layout, as the engine reads it.
func BenchmarkParseOwn(b *testing.B) {
	data := benchLog()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		p := NewParser(Log)
		for start := 0; start < len(data); {
			start = p.Next(data, start).End
		}
	}
}

// BenchmarkParseJSONLines: a transcript-like JSON-lines file, parsed and
// its prose read.
func BenchmarkParseJSONLines(b *testing.B) {
	var sb strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&sb, `{"type":"assistant","timestamp":"2026-03-02T13:00:%02d.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Step %d: I read the file and found the \"cache\" test sleeps.\nNext I change it."},{"type":"tool_use","input":{"command":"go test ./..."}}]}}`+"\n", i%60, i)
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	var prose []byte
	for b.Loop() {
		p := NewParser(Plain)
		for start := 0; start < len(data); {
			l := p.Next(data, start)
			if l.JSON {
				prose = Prose(prose[:0], data[l.Start:l.TextEnd])
			}
			start = l.End
		}
	}
}
