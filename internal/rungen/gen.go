package rungen

import (
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// gen writes the lines of one file from its own random stream.
type gen struct {
	r      *rand.Rand
	zipf   *rand.Zipf
	vocab  []string
	shared []string
	buf    []byte
	out    io.Writer
	stats  fileStats
	err    error

	// record state
	unix    int64 // seconds of the current record
	ms      int
	msSep   byte // 0: no milliseconds; '.' or ','
	conv    int  // 0: "-"
	convs   int
	fielded bool
	agent   string
	logLine bool
}

func newGen(seed int64, stream uint64, vocab *Vocabulary, shared []string) *gen {
	r := rand.New(rand.NewPCG(uint64(seed)^0x72756e67656e, stream*0x9e3779b97f4a7c15+1))
	return &gen{
		r: r,
		// s=1.07, v=2: heavy head, long tail (see Vocabulary).
		zipf:   rand.NewZipf(r, 1.07, 2, uint64(len(vocab.Words)-1)),
		vocab:  vocab.Words,
		shared: shared,
		buf:    make([]byte, 0, 96<<10),
	}
}

func (g *gen) writeFile(w io.Writer, j *job) (fileStats, error) {
	g.out = w
	switch j.kind {
	case kindHistory, kindLog:
		g.records(j)
	case kindNote:
		g.notes(j.budget)
	case kindStray:
		g.line([]byte("Run bookkeeping; belongs to no agent: quokka deploy database migration hotel booking"))
		g.newline(false)
	}
	g.flush()
	return g.stats, g.err
}

func (g *gen) records(j *job) {
	g.unix = baseTime + int64(j.episode-1)*86400 + int64(g.r.IntN(600))
	g.fielded = j.fielded
	g.agent = j.agent
	g.convs = j.convs
	g.logLine = j.kind == kindLog
	// A file keeps one timestamp pattern, as logback does.
	p := g.r.IntN(10)
	switch {
	case g.logLine && p < 7, !g.logLine && p < 2:
		g.msSep = '.'
	case g.logLine && p < 9, !g.logLine && p < 3:
		g.msSep = ','
	default:
		g.msSep = 0
	}
	if g.logLine && g.r.IntN(8) == 0 {
		// A line before the first record (written by something other than logback).
		g.buf = append(g.buf, "--- log opened for "...)
		g.buf = append(g.buf, j.agent...)
		g.buf = append(g.buf, " ---"...)
		g.newline(false)
	}
	ep := strconv.Itoa(j.episode)
	g.conv = 0
	if g.logLine {
		g.head("INFO", "running")
		g.str(j.agent + " chat started")
	} else {
		g.head("", "running")
		g.str(j.agent + " has started episode " + ep + ".")
	}
	g.endRecord()
	for g.stats.bytes+int64(len(g.buf)) < j.budget && g.err == nil {
		g.advance()
		if g.r.IntN(20) == 0 {
			g.conv = g.r.IntN(g.convs + 1) // 0 is "-"
		}
		if g.logLine {
			g.logRecord()
		} else {
			g.historyRecord()
		}
	}
	g.advance()
	g.conv = 0
	if g.logLine {
		g.head("INFO", "finished")
		g.str(j.agent + " chat stopped")
	} else {
		g.head("", "finished")
		g.str(j.agent + " has finished episode " + ep + ".")
	}
	g.endRecord()
}

func (g *gen) historyRecord() {
	g.head("", "running")
	switch p := g.r.IntN(20); {
	case p < 7:
		g.str(g.agent + " was told: ")
		g.sentence(3 + g.r.IntN(18))
		g.continuations(4)
	case p < 16:
		g.str(g.agent + " said: ")
		g.sentence(3 + g.r.IntN(22))
		g.continuations(3)
	default:
		g.str(g.agent + " ")
		g.sentence(2 + g.r.IntN(12))
	}
	g.endRecord()
}

var levels = [...]string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR"}

func (g *gen) logRecord() {
	var level string
	switch p := g.r.IntN(100); {
	case p < 12:
		level = levels[0]
	case p < 40:
		level = levels[1]
	case p < 85:
		level = levels[2]
	case p < 95:
		level = levels[3]
	default:
		level = levels[4]
	}
	g.head(level, "running")
	g.str(g.agent + " ")
	if level == "INFO" && g.r.IntN(4) == 0 {
		g.str("said: ")
	}
	g.sentence(2 + g.r.IntN(14))
	switch level {
	case "INFO":
		if g.r.IntN(20) == 0 {
			g.continuations(1)
		}
	case "WARN":
		if g.r.IntN(4) == 0 {
			g.stackTrace()
		}
	case "ERROR":
		if g.r.IntN(10) < 7 {
			g.stackTrace()
		}
	}
	g.endRecord()
}

// head starts a record line: timestamp, level (log files), state, conversation.
func (g *gen) head(level, state string) {
	g.buf = time.Unix(g.unix, 0).UTC().AppendFormat(g.buf, "2006-01-02 15:04:05")
	if g.msSep != 0 {
		g.buf = append(g.buf, g.msSep)
		g.buf = append(g.buf, byte('0'+g.ms/100), byte('0'+g.ms/10%10), byte('0'+g.ms%10))
	}
	g.buf = append(g.buf, ' ')
	if level != "" {
		g.buf = append(g.buf, level...)
		for i := len(level); i < 5; i++ {
			g.buf = append(g.buf, ' ')
		}
		g.buf = append(g.buf, ' ')
	}
	g.buf = append(g.buf, '[')
	g.buf = append(g.buf, state...)
	g.buf = append(g.buf, "] "...)
	if g.fielded {
		if g.conv == 0 {
			g.buf = append(g.buf, "[-] "...)
		} else {
			g.buf = append(g.buf, "[conv-"...)
			g.buf = strconv.AppendInt(g.buf, int64(g.conv), 10)
			g.buf = append(g.buf, "] "...)
		}
	}
}

// continuations adds, one time in odds, 1 to 8 lines with the two-space indent.
func (g *gen) continuations(odds int) {
	if g.r.IntN(odds) != 0 {
		return
	}
	n := 1 + g.r.IntN(8)
	for i := 0; i < n; i++ {
		g.newline(false)
		g.buf = append(g.buf, ' ', ' ')
		if g.r.IntN(6) == 0 {
			g.buf = append(g.buf, "- "...)
		}
		g.sentence(2 + g.r.IntN(14))
	}
}

var exceptions = [...]string{
	"java.lang.IllegalStateException", "java.lang.NullPointerException",
	"java.io.UncheckedIOException", "java.util.concurrent.TimeoutException",
	"java.net.SocketTimeoutException", "java.lang.IllegalArgumentException",
	"com.example.agent.ToolFailedException",
}

// stackTrace appends an unindented Java stack trace, as logback writes one.
func (g *gen) stackTrace() {
	g.stats.traces++
	causes := 1
	if g.r.IntN(3) == 0 {
		causes = 2
	}
	for c := 0; c < causes; c++ {
		g.newline(false)
		if c > 0 {
			g.buf = append(g.buf, "Caused by: "...)
		}
		g.buf = append(g.buf, exceptions[g.r.IntN(len(exceptions))]...)
		g.buf = append(g.buf, ": "...)
		g.sentence(2 + g.r.IntN(8))
		frames := 3 + g.r.IntN(12)
		for i := 0; i < frames; i++ {
			g.newline(false)
			pkg, class, method := g.word(), g.word(), g.word()
			g.buf = append(g.buf, "\tat com.example."...)
			g.buf = append(g.buf, pkg...)
			g.buf = append(g.buf, '.')
			g.appendTitle(class)
			g.buf = append(g.buf, '.')
			g.buf = append(g.buf, method...)
			g.buf = append(g.buf, '(')
			g.appendTitle(class)
			g.buf = append(g.buf, ".java:"...)
			g.buf = strconv.AppendInt(g.buf, int64(10+g.r.IntN(900)), 10)
			g.buf = append(g.buf, ')')
		}
		if c > 0 {
			g.newline(false)
			g.buf = append(g.buf, "\t... "...)
			g.buf = strconv.AppendInt(g.buf, int64(1+g.r.IntN(40)), 10)
			g.buf = append(g.buf, " more"...)
		}
	}
}

func (g *gen) notes(budget int64) {
	crlf := g.r.IntN(10) == 0
	for g.stats.bytes+int64(len(g.buf)) < budget && g.err == nil {
		switch p := g.r.IntN(40); {
		case p < 2:
			g.buf = append(g.buf, "# "...)
			g.sentence(2 + g.r.IntN(5))
		case p < 4:
			// blank line
		case p < 6:
			g.buf = append(g.buf, g.shared[g.r.IntN(len(g.shared))]...)
		case p < 14:
			g.buf = append(g.buf, "- "...)
			g.sentence(3 + g.r.IntN(12))
		case p < 16:
			g.buf = append(g.buf, "todo: "...)
			g.sentence(3 + g.r.IntN(8))
		default:
			g.sentence(4 + g.r.IntN(20))
		}
		g.newline(crlf)
	}
}

// sentence appends n words. One time in 500 the sentence is long instead (up to
// ~3000 characters), so lines beyond the 2000-character piece limit occur.
func (g *gen) sentence(n int) {
	if g.r.IntN(500) == 0 {
		n = 200 + g.r.IntN(300)
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			if g.r.IntN(12) == 0 {
				g.buf = append(g.buf, ',')
			}
			g.buf = append(g.buf, ' ')
		}
		switch p := g.r.IntN(1000); {
		case p < 2:
			g.buf = append(g.buf, nonASCII[g.r.IntN(len(nonASCII))]...)
		case p < 30:
			g.buf = strconv.AppendInt(g.buf, int64(g.r.IntN(10000)), 10)
		case p < 34:
			// Request ids and hashes: terms seen once or twice, whose number grows
			// with the run, as in real logs (the term table must cope with them).
			g.buf = strconv.AppendUint(g.buf, g.r.Uint64()>>(4*uint(g.r.IntN(6))), 16)
		case p < 35:
			g.buf = append(g.buf, paths[g.r.IntN(len(paths))]...)
			g.buf = append(g.buf, g.word()...)
			g.buf = append(g.buf, '/')
			g.buf = append(g.buf, g.word()...)
			g.buf = append(g.buf, exts[g.r.IntN(len(exts))]...)
		default:
			w := g.word()
			if i == 0 {
				g.appendTitle(w)
			} else {
				g.buf = append(g.buf, w...)
			}
		}
	}
	g.buf = append(g.buf, '.')
}

var (
	paths = [...]string{"/home/agent/work/", "/tmp/", "~/projects/", "/var/lib/app/", `C:\Users\agent\`}
	exts  = [...]string{".py", ".go", ".json", ".sql", ".md", ".yaml"}
)

func (g *gen) word() string { return g.vocab[g.zipf.Uint64()] }

func (g *gen) appendTitle(w string) {
	if w != "" && w[0] >= 'a' && w[0] <= 'z' {
		g.buf = append(g.buf, w[0]-'a'+'A')
		g.buf = append(g.buf, w[1:]...)
		return
	}
	g.buf = append(g.buf, w...)
}

func (g *gen) str(s string) { g.buf = append(g.buf, s...) }

func (g *gen) line(b []byte) { g.buf = append(g.buf, b...) }

func (g *gen) endRecord() {
	g.newline(false)
	g.stats.records++
}

func (g *gen) newline(crlf bool) {
	if crlf {
		g.buf = append(g.buf, '\r')
	}
	g.buf = append(g.buf, '\n')
	g.stats.lines++
	if len(g.buf) >= 64<<10 {
		g.flush()
	}
}

// advance moves the clock of the record stream forward by up to a few seconds.
func (g *gen) advance() {
	g.ms += g.r.IntN(2500)
	g.unix += int64(g.ms / 1000)
	g.ms %= 1000
}

func (g *gen) flush() {
	if len(g.buf) == 0 || g.err != nil {
		g.buf = g.buf[:0]
		return
	}
	n, err := g.out.Write(g.buf)
	g.stats.bytes += int64(n)
	g.err = err
	g.buf = g.buf[:0]
}

// sharedNoteLines are lines that several agents copy into their notes, so the
// same note appears in many files (runls gives it once).
func sharedNoteLines(seed int64, v *Vocabulary) []string {
	g := newGen(seed, 1<<62, v, nil)
	out := make([]string, 0, 64)
	for i := 0; i < 64; i++ {
		g.buf = g.buf[:0]
		g.buf = append(g.buf, "Remember: "...)
		g.sentence(4 + g.r.IntN(8))
		out = append(out, string(g.buf))
	}
	return out
}
