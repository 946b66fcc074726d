// Package rungen writes deterministic, realistic runs for benchmarks and large tests
// of runls: `<run>/episode-N/<agent>/` folders holding a `.history` and a `.log`
// record file in the logback forms of the spec (§2) and plain note files.
//
// The words come from a Zipf distribution over a vocabulary of common English words,
// domain words and generated pseudo-words, so a run has the frequent terms and the long
// tail of rare ones that make ranking and pruning matter. Every line form occurs:
// history and log records, with and without milliseconds (`.SSS` and `,SSS`), all five
// levels, fielded and unfielded records (the first episodes are written "before
// 0.18.6"), the `-` conversation, multi-line messages with two-space indents,
// unindented Java stack traces after WARN and ERROR records, a line before a file's
// first record, told/said messages, `chat started/stopped`, lines longer than 2000
// characters, CRLF note files, repeated note lines, hex ids (a term table that grows
// with the run), file paths, and occasional non-ASCII text with characters outside
// the BMP.
//
// The same Options give the same bytes on every machine: every file is written from
// its own random stream, so files are written in parallel without changing what they
// hold.
package rungen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options says what run to write. Zero fields take the defaults named.
type Options struct {
	// Bytes is the total size of the run. Each file stops after the record that
	// reaches its share, so the run is a little larger (at most one record a file).
	// Default 100 MiB.
	Bytes int64
	// Seed selects the run; the same seed and options give the same bytes.
	Seed int64
	// Episodes is the number of episode folders, episode-1 to episode-N. Default 10.
	Episodes int
	// Agents is the number of agent folders in each episode. Default 4.
	Agents int
	// FilesPerAgent is the number of plain note files per agent besides its
	// .history and .log files. Default 2; negative: none.
	FilesPerAgent int
	// UnfieldedEpisodes is how many of the first episodes are written before 0.18.6,
	// without the conversation field. Default 1; negative: none.
	UnfieldedEpisodes int
	// Conversations is the number of conversation ids (conv-1 ... conv-K) used in
	// each fielded episode. Default 12.
	Conversations int
	// VocabularySize is the number of generated words added to the English and
	// domain words. Default 50000.
	VocabularySize int
	// Workers is the number of files written at once. Default GOMAXPROCS.
	Workers int
}

// Stats says what Generate wrote.
type Stats struct {
	Files   int   // files written, including the few that belong to no agent
	Bytes   int64 // bytes written
	Lines   int64 // lines written
	Records int64 // records written to .history and .log files
	// StackTraces counts the records that end with an unindented stack trace
	// (so that a checker can count one warning per such record).
	StackTraces int64
	Episodes    int
	Agents      int // agent folders, over all episodes
}

// Defaults returns opts with every zero field set to its default.
func (o Options) Defaults() Options {
	if o.Bytes == 0 {
		o.Bytes = 100 << 20
	}
	if o.Episodes == 0 {
		o.Episodes = 10
	}
	if o.Agents == 0 {
		o.Agents = 4
	}
	if o.FilesPerAgent == 0 {
		o.FilesPerAgent = 2
	} else if o.FilesPerAgent < 0 {
		o.FilesPerAgent = 0
	}
	if o.UnfieldedEpisodes == 0 {
		o.UnfieldedEpisodes = 1
	} else if o.UnfieldedEpisodes < 0 {
		o.UnfieldedEpisodes = 0
	}
	if o.Conversations == 0 {
		o.Conversations = 12
	}
	if o.VocabularySize == 0 {
		o.VocabularySize = 50000
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Bytes < 0:
		return fmt.Errorf("rungen: Bytes %d is negative", o.Bytes)
	case o.Episodes < 0:
		return fmt.Errorf("rungen: Episodes %d is negative", o.Episodes)
	case o.Agents < 0:
		return fmt.Errorf("rungen: Agents %d is negative", o.Agents)
	case o.Conversations < 0:
		return fmt.Errorf("rungen: Conversations %d is negative", o.Conversations)
	case o.VocabularySize < 0:
		return fmt.Errorf("rungen: VocabularySize %d is negative", o.VocabularySize)
	}
	return nil
}

// Generate writes a run into dir, which must be missing or empty (so a run is never
// mixed with the rest of an older one).
func Generate(ctx context.Context, dir string, opts Options) (Stats, error) {
	if err := opts.validate(); err != nil {
		return Stats{}, err
	}
	opts = opts.Defaults()
	if err := ensureEmptyDir(dir); err != nil {
		return Stats{}, err
	}
	vocab := NewVocabulary(opts.Seed, opts.VocabularySize)
	shared := sharedNoteLines(opts.Seed, vocab)
	jobs := planFiles(opts)

	var (
		stats    Stats
		mu       sync.Mutex
		firstErr error
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) || ctx.Err() != nil {
					return
				}
				fs, err := writeJob(filepath.Join(dir, jobs[i].path), &jobs[i], opts.Seed, vocab, shared)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				stats.Files++
				stats.Bytes += fs.bytes
				stats.Lines += fs.lines
				stats.Records += fs.records
				stats.StackTraces += fs.traces
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return stats, firstErr
	}
	if err := ctx.Err(); err != nil {
		return stats, fmt.Errorf("rungen: generate %s: %w", dir, err)
	}
	stats.Episodes = opts.Episodes
	stats.Agents = opts.Episodes * opts.Agents
	return stats, nil
}

// Measure returns the Stats that Generate writes for opts, without writing
// anything: every file is generated from its own stream into nothing. For
// checking what a cached run (Cached) holds.
func Measure(opts Options) (Stats, error) {
	if err := opts.validate(); err != nil {
		return Stats{}, err
	}
	opts = opts.Defaults()
	vocab := NewVocabulary(opts.Seed, opts.VocabularySize)
	shared := sharedNoteLines(opts.Seed, vocab)
	var st Stats
	for _, j := range planFiles(opts) {
		fs, err := newGen(opts.Seed, j.stream, vocab, shared).writeFile(io.Discard, &j)
		if err != nil {
			return st, err
		}
		st.Files++
		st.Bytes += fs.bytes
		st.Lines += fs.lines
		st.Records += fs.records
		st.StackTraces += fs.traces
	}
	st.Episodes = opts.Episodes
	st.Agents = opts.Episodes * opts.Agents
	return st, nil
}

// Queries returns n search queries over the vocabulary of opts (its Seed and
// VocabularySize), deterministic, for benchmarks that compare query latencies. They
// mix the cases a ranker meets: the most frequent words (which a pruning ranker must
// not scan in full), common words, domain phrases, middling words and rare words.
func Queries(opts Options, n int) []string {
	opts = opts.Defaults()
	v := NewVocabulary(opts.Seed, opts.VocabularySize)
	total := len(v.Words)
	stop := v.Words[:20]                 // "the", "of", "and", ...
	common := v.Words[40:v.EnglishWords] // English words past the function words
	domain := domainWords                // spread from frequent to rare
	middling := v.pick(1000, 5000, 40)
	rare := v.pick(total/2, total, 40)
	phrases := []string{"deploy database migration", "hotel booking", "rollback staging",
		"timeout retry connection", "flight itinerary", "exception stack trace"}
	out := make([]string, 0, n)
	for i := 0; len(out) < n; i++ {
		k := i / 10
		var q string
		switch i % 10 {
		case 0:
			q = phrases[k%len(phrases)]
		case 1:
			q = rare[(k*7)%len(rare)]
		case 2:
			q = common[(k*5)%len(common)] + " " + middling[(k*3)%len(middling)]
		case 3:
			q = middling[(k*11+1)%len(middling)]
		case 4:
			q = stop[k%len(stop)] + " " + common[(k*7+3)%len(common)] + " " + rare[(k*13+5)%len(rare)]
		case 5:
			q = rare[(k*17+9)%len(rare)] + " " + middling[(k*5+7)%len(middling)]
		case 6:
			q = common[(k*9+11)%len(common)]
		case 7:
			q = domain[(k*37+20)%len(domain)]
		case 8:
			q = stop[(k*3+1)%len(stop)] + " " + stop[(k*3+2)%len(stop)] + " " + domain[(k*13)%len(domain)]
		case 9:
			q = rare[(k*19+2)%len(rare)] + " " + rare[(k*23+4)%len(rare)]
		}
		out = append(out, q)
	}
	return out
}

// AgentNames returns the agent folder names Generate uses for n agents.
func AgentNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		if i < len(agentNames) {
			out[i] = agentNames[i]
		} else {
			out[i] = "agent" + strconv.Itoa(i+1)
		}
	}
	return out
}

var agentNames = strings.Fields("alice bob carol dave erin frank grace heidi ivan judy mallory niaj olivia peggy rupert sybil trent victor walter")

type fileKind int

const (
	kindHistory fileKind = iota
	kindLog
	kindNote
	kindStray // a file that belongs to no agent
)

type job struct {
	path    string
	kind    fileKind
	episode int
	agent   string // as written in records: "Alice"
	fielded bool
	convs   int
	budget  int64
	stream  uint64 // index of the file's random stream
}

// planFiles lays out the run and gives each file its share of the bytes. The shares
// vary per agent and episode (as in real runs, where some agents talk much more).
func planFiles(o Options) []job {
	r := rand.New(rand.NewPCG(uint64(o.Seed), 0x706c616e)) // "plan"
	names := AgentNames(o.Agents)
	type weighted struct {
		j job
		w float64
	}
	var ws []weighted
	for e := 1; e <= o.Episodes; e++ {
		ep := "episode-" + strconv.Itoa(e)
		fielded := e > o.UnfieldedEpisodes
		for _, name := range names {
			agentW := 0.5 + r.Float64()
			display := strings.ToUpper(name[:1]) + name[1:]
			base := job{episode: e, agent: display, fielded: fielded, convs: o.Conversations}
			h := base
			h.path, h.kind = filepath.Join(ep, name, name+".history"), kindHistory
			l := base
			l.path, l.kind = filepath.Join(ep, name, name+".log"), kindLog
			ws = append(ws, weighted{h, agentW * 0.34}, weighted{l, agentW * 0.56})
			for k := 0; k < o.FilesPerAgent; k++ {
				n := base
				n.path, n.kind = filepath.Join(ep, name, notePath(k)), kindNote
				ws = append(ws, weighted{n, agentW * 0.10 / float64(o.FilesPerAgent)})
			}
		}
	}
	var sum float64
	for _, w := range ws {
		sum += w.w
	}
	jobs := make([]job, 0, len(ws)+3)
	for i, w := range ws {
		w.j.budget = int64(float64(o.Bytes) * w.w / sum)
		w.j.stream = uint64(i)
		jobs = append(jobs, w.j)
	}
	// Files outside any agent folder, which runls must not search.
	for i, p := range []string{"run.txt", filepath.Join("episode-1", "episode.txt"), filepath.Join("archive", "alice", "notes.md")} {
		if o.Episodes == 0 && i == 1 {
			continue
		}
		jobs = append(jobs, job{path: p, kind: kindStray, budget: 200, stream: uint64(len(ws) + i)})
	}
	return jobs
}

func notePath(k int) string {
	switch {
	case k == 0:
		return "notes.md"
	case k == 1:
		return filepath.Join("scratch", "todo.txt")
	case k%2 == 0:
		return filepath.Join("notes", "note-"+strconv.Itoa(k)+".md")
	default:
		return filepath.Join("scratch", "plan-"+strconv.Itoa(k)+".txt")
	}
}

type fileStats struct {
	bytes, lines, records, traces int64
}

func writeJob(path string, j *job, seed int64, vocab *Vocabulary, shared []string) (fileStats, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fileStats{}, fmt.Errorf("rungen: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fileStats{}, fmt.Errorf("rungen: %w", err)
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	g := newGen(seed, j.stream, vocab, shared)
	fs, werr := g.writeFile(bw, j)
	if err := bw.Flush(); err != nil && werr == nil {
		werr = err
	}
	if err := f.Close(); err != nil && werr == nil {
		werr = err
	}
	if werr != nil {
		return fs, fmt.Errorf("rungen: write %s: %w", path, werr)
	}
	return fs, nil
}

func ensureEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("rungen: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("rungen: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("rungen: output folder %s is not empty", dir)
	}
	return nil
}

// baseTime is when episode-1 starts; each later episode starts a day later.
var baseTime = time.Date(2026, 10, 20, 8, 0, 0, 0, time.UTC).Unix()
