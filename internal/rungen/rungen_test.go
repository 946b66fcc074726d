package rungen

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// goldenHashValue is the hash of the run of goldenOpts, for the current Version.
// Cached runs and published figures are keyed by Version, seed and size, so a change
// of the generator's output must be deliberate: when you change it on purpose, put
// the new hash here and increase Version.
const goldenHashValue = "2d1387518edd3bdde86aa6e5d37119310f4b905a043251803303f8547682cc94"

var goldenOpts = Options{Bytes: 256 << 10, Seed: 42, Episodes: 3, Agents: 2}

func generate(t *testing.T, opts Options) (string, Stats) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	st, err := Generate(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return dir, st
}

// hashRun hashes every file's relative path and content, in path order.
func hashRun(t *testing.T, dir string) (string, int64) {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	h := sha256.New()
	var total int64
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		total += int64(len(b))
		h.Write([]byte(filepath.ToSlash(rel)))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), total
}

func TestDeterministic(t *testing.T) {
	base := Options{Bytes: 1 << 20, Seed: 7, Episodes: 4, Agents: 3}
	one := base
	one.Workers = 1
	four := base
	four.Workers = 4
	d1, s1 := generate(t, one)
	d2, s2 := generate(t, four)
	h1, _ := hashRun(t, d1)
	h2, _ := hashRun(t, d2)
	if h1 != h2 {
		t.Errorf("same options, 1 and 4 workers: hashes differ: %s vs %s", h1, h2)
	}
	if s1 != s2 {
		t.Errorf("same options: stats differ: %+v vs %+v", s1, s2)
	}
	other := base
	other.Seed = 8
	d3, _ := generate(t, other)
	if h3, _ := hashRun(t, d3); h3 == h1 {
		t.Errorf("seeds 7 and 8 wrote the same run")
	}
}

func TestGoldenHash(t *testing.T) {
	dir, _ := generate(t, goldenOpts)
	h, _ := hashRun(t, dir)
	if h != goldenHashValue {
		t.Errorf("the run of %+v changed: hash %s, want %s.\n"+
			"If the generator changed on purpose, set goldenHashValue to the new hash "+
			"and increase Version (so cached runs are not reused).", goldenOpts, h, goldenHashValue)
	}
}

func TestSizeAndStats(t *testing.T) {
	for _, size := range []int64{64 << 10, 4 << 20} {
		opts := Options{Bytes: size, Seed: 3}
		dir, st := generate(t, opts)
		_, total := hashRun(t, dir)
		if st.Bytes != total {
			t.Errorf("size %d: Stats.Bytes %d, files hold %d", size, st.Bytes, total)
		}
		// Each file stops after the record that reaches its share: a few KB over at most.
		if total < size || total > size+size/20+int64(st.Files)*4096 {
			t.Errorf("size %d: wrote %d bytes", size, total)
		}
		if lines := countLines(t, dir); lines != st.Lines {
			t.Errorf("size %d: Stats.Lines %d, files hold %d", size, st.Lines, lines)
		}
		if st.Episodes != 10 || st.Agents != 40 {
			t.Errorf("size %d: stats %+v, want the default 10 episodes of 4 agents", size, st)
		}
		// 10 episodes x 4 agents x (history, log, 2 notes) + 3 stray files.
		if st.Files != 163 {
			t.Errorf("size %d: %d files, want 163", size, st.Files)
		}
		// Measure tells the same without writing.
		if m, err := Measure(opts); err != nil || m != st {
			t.Errorf("size %d: Measure %+v (%v), Generate %+v", size, m, err, st)
		}
		if st.StackTraces == 0 || st.StackTraces >= st.Records {
			t.Errorf("size %d: %d records with a stack trace of %d", size, st.StackTraces, st.Records)
		}
	}
}

func countLines(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		n += int64(bytes.Count(b, []byte("\n")))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCached(t *testing.T) {
	cache := t.TempDir()
	opts := Options{Bytes: 128 << 10, Seed: 9, Episodes: 2, Agents: 2}
	dir1, err := Cached(context.Background(), cache, opts)
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := hashRun(t, dir1)
	// A second call reuses the run: a marker file written into it survives.
	marker := filepath.Join(dir1, "marker")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir2, err := Cached(context.Background(), cache, opts)
	if err != nil || dir2 != dir1 {
		t.Fatalf("second call: %q, %v; want %q", dir2, err, dir1)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("second call regenerated the run")
	}
	os.Remove(marker)
	// Other options: another run, and the same bytes as Generate writes.
	opts.Seed = 10
	dir3, err := Cached(context.Background(), cache, opts)
	if err != nil || dir3 == dir1 {
		t.Fatalf("other seed: %q, %v", dir3, err)
	}
	dir4, _ := generate(t, opts)
	h3, _ := hashRun(t, dir3)
	h4, _ := hashRun(t, dir4)
	if h3 != h4 || h3 == h1 {
		t.Errorf("cached run differs from Generate's, or seeds 9 and 10 agree")
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 2 {
		t.Errorf("cache holds %d entries, want the 2 runs (no temporary folders left)", len(entries))
	}
}

func TestOptionErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(context.Background(), dir, Options{Bytes: 1000}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty folder: err %v, want one saying it is not empty", err)
	}
	if _, err := Generate(context.Background(), t.TempDir(), Options{Bytes: -1}); err == nil || !strings.Contains(err.Error(), "Bytes") {
		t.Errorf("negative Bytes: err %v, want one naming Bytes", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Generate(ctx, filepath.Join(t.TempDir(), "run"), Options{Bytes: 1 << 20}); err == nil {
		t.Errorf("cancelled context: no error")
	}
}

var (
	tsRe      = `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d([.,]\d{3})?`
	historyRe = regexp.MustCompile(`^` + tsRe + ` \[(running|finished)\] (\[(-|conv-\d+)\] )?([A-Z][a-z0-9]+) (.*)$`)
	logRe     = regexp.MustCompile(`^` + tsRe + ` (TRACE|DEBUG|INFO |WARN |ERROR) \[(running|finished)\] (\[(-|conv-\d+)\] )?([A-Z][a-z0-9]+) (.*)$`)
)

// TestLineForms reads a generated run with its own small parser of spec §2 and
// checks that every line form the spec names occurs, and that record lines carry
// the agent of their folder.
func TestLineForms(t *testing.T) {
	dir, _ := generate(t, Options{Bytes: 6 << 20, Seed: 11})
	seen := map[string]int{}
	noteLines := map[string]map[string]bool{} // note line -> files holding it
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		switch {
		case len(parts) == 1:
			seen["file in run folder"]++
			return nil
		case len(parts) == 2:
			seen["file in episode folder"]++
			return nil
		case !regexp.MustCompile(`^episode-\d+$`).MatchString(parts[0]):
			seen["folder not named episode-N"]++
			return nil
		case len(parts) > 3:
			seen["note in a subfolder"]++
		}
		agent := parts[1]
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !utf8.Valid(b) {
			t.Errorf("%s: invalid UTF-8", rel)
		}
		if bytes.Contains(b, []byte("\r\n")) {
			seen["CRLF"]++
		}
		ext := filepath.Ext(p)
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		first := true
		for sc.Scan() {
			line := strings.TrimSuffix(sc.Text(), "\r")
			if len(utf16.Encode([]rune(line))) > 2000 {
				seen["line over 2000 UTF-16 units"]++
			}
			for _, r := range line {
				if r > 0xFFFF {
					seen["character outside the BMP"]++
				} else if r > 0x7F {
					seen["non-ASCII"]++
				}
			}
			if ext != ".history" && ext != ".log" {
				if line != "" {
					if noteLines[line] == nil {
						noteLines[line] = map[string]bool{}
					}
					noteLines[line][rel] = true
				}
				continue
			}
			re, kind := historyRe, "history"
			if ext == ".log" {
				re, kind = logRe, "log"
			}
			m := re.FindStringSubmatch(line)
			if m == nil {
				switch {
				case first:
					seen["line before first record"]++
				case strings.HasPrefix(line, "  "):
					seen["indented continuation"]++
				case strings.HasPrefix(line, "\tat "):
					seen["stack frame"]++
				case strings.HasPrefix(line, "Caused by: "):
					seen["Caused by"]++
				case regexp.MustCompile(`^[a-z]+(\.[a-z]+)+\.[A-Za-z]+Exception: `).MatchString(line):
					seen["exception line"]++
				case strings.HasPrefix(line, "\t... "):
					seen["... more"]++
				default:
					t.Errorf("%s: unexpected line %q", rel, line)
				}
				first = false
				continue
			}
			first = false
			ms := m[1]
			if ms == "" {
				seen[kind+" without milliseconds"]++
			} else {
				seen[kind+" with "+ms[:1]+"SSS"]++
			}
			var field, conv, name, msg string
			if kind == "history" {
				field, conv, name, msg = m[3], m[4], m[5], m[6]
			} else {
				level := strings.TrimSpace(m[2])
				field, conv, name, msg = m[4], m[5], m[6], m[7]
				if field == "" {
					seen["log unfielded "+level]++
				} else {
					seen["log fielded "+level]++
				}
			}
			if field == "" {
				seen[kind+" unfielded"]++
			} else {
				seen[kind+" fielded"]++
				if conv == "-" {
					seen["conversation -"]++
				} else {
					seen["conversation id"]++
				}
			}
			if strings.ToLower(name) != agent {
				t.Errorf("%s: record of agent %q in folder %q: %q", rel, name, agent, line)
			}
			switch {
			case strings.HasPrefix(msg, "was told: "):
				seen["told"]++
			case strings.HasPrefix(msg, "said: "):
				seen["said"]++
			case msg == "chat started" || msg == "chat stopped":
				seen["chat started/stopped"]++
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	for line, files := range noteLines {
		if len(files) > 1 && strings.HasPrefix(line, "Remember: ") {
			seen["note line in several files"]++
		}
	}
	want := []string{
		"file in run folder", "file in episode folder", "folder not named episode-N", "note in a subfolder",
		"CRLF", "line over 2000 UTF-16 units", "character outside the BMP", "non-ASCII",
		"line before first record", "indented continuation", "stack frame", "Caused by", "exception line", "... more",
		"history without milliseconds", "history with .SSS", "history with ,SSS",
		"log without milliseconds", "log with .SSS", "log with ,SSS",
		"history fielded", "history unfielded", "log fielded", "log unfielded",
		"conversation -", "conversation id", "told", "said", "chat started/stopped",
		"note line in several files",
	}
	for _, l := range levels {
		want = append(want, "log fielded "+l, "log unfielded "+l)
	}
	for _, w := range want {
		if seen[w] == 0 {
			t.Errorf("no %s in the generated run", w)
		}
	}
	if t.Failed() {
		t.Logf("seen: %v", seen)
	}
}

func TestUnfieldedEpisodes(t *testing.T) {
	dir, _ := generate(t, Options{Bytes: 512 << 10, Seed: 5, Episodes: 3, Agents: 1, UnfieldedEpisodes: 2})
	for ep, wantFielded := range map[string]bool{"episode-1": false, "episode-2": false, "episode-3": true} {
		b, err := os.ReadFile(filepath.Join(dir, ep, "alice", "alice.history"))
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		m := historyRe.FindStringSubmatch(first)
		if m == nil {
			t.Fatalf("%s: first line %q is not a record", ep, first)
		}
		if got := m[3] != ""; got != wantFielded {
			t.Errorf("%s: fielded %v, want %v: %q", ep, got, wantFielded, first)
		}
	}
}

func TestAppend(t *testing.T) {
	dir := t.TempDir()
	agentDir := filepath.Join(dir, "episode-1", "bob")
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file string
		re   *regexp.Regexp
	}{
		{"bob.history", historyRe},
		{"bob.log", logRe},
		{"notes.md", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(agentDir, tt.file)
			a := NewAppender(Options{Seed: 1})
			n1, err := a.Append(path, 50)
			if err != nil {
				t.Fatal(err)
			}
			first, _ := os.ReadFile(path)
			n2, err := a.Append(path, 50)
			if err != nil {
				t.Fatal(err)
			}
			all, _ := os.ReadFile(path)
			if int64(len(first)) != n1 || int64(len(all)) != n1+n2 {
				t.Fatalf("appended %d+%d bytes, file holds %d then %d", n1, n2, len(first), len(all))
			}
			if bytes.Equal(all[:n1], all[n1:]) {
				t.Errorf("two appends wrote the same bytes")
			}
			if !bytes.HasSuffix(all, []byte("\n")) {
				t.Errorf("append does not end with a line end")
			}
			records := 0
			for _, line := range strings.Split(strings.TrimSuffix(string(all), "\n"), "\n") {
				if tt.re == nil {
					records++
					continue
				}
				if m := tt.re.FindStringSubmatch(line); m != nil {
					records++
					if !strings.Contains(line, "] [") || !strings.Contains(line, " Bob ") {
						t.Errorf("appended record is not fielded or not Bob's: %q", line)
					}
				}
			}
			if records != 100 {
				t.Errorf("%d records appended, want 100", records)
			}
			// Same seed, fresh appender: same bytes.
			again := filepath.Join(agentDir, "again"+filepath.Ext(tt.file))
			if _, err := Append(again, 50, 1); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(again)
			if !bytes.Equal(b, first) {
				t.Errorf("Append with the same seed wrote other bytes")
			}
		})
	}
	if _, err := Append(filepath.Join(dir, "x.log"), -1, 1); err == nil {
		t.Errorf("negative count: no error")
	}
}

func TestQueries(t *testing.T) {
	opts := Options{Seed: 1}
	q1 := Queries(opts, 20)
	q2 := Queries(opts, 20)
	if len(q1) != 20 || strings.Join(q1, "|") != strings.Join(q2, "|") {
		t.Fatalf("queries not deterministic or not 20: %q vs %q", q1, q2)
	}
	v := NewVocabulary(1, Options{}.Defaults().VocabularySize)
	rank := map[string]int{}
	for i, w := range v.Words {
		rank[w] = i
	}
	var rare, frequent bool
	for _, q := range q1 {
		for _, w := range strings.Fields(q) {
			r, ok := rank[w]
			if !ok {
				t.Errorf("query %q: word %q not in the vocabulary", q, w)
			}
			rare = rare || r > len(v.Words)/2
			frequent = frequent || r < 500
		}
	}
	if !rare || !frequent {
		t.Errorf("queries do not mix rare and frequent words: %q", q1)
	}
}

func TestVocabulary(t *testing.T) {
	v := NewVocabulary(1, 50000)
	seen := map[string]bool{}
	for _, w := range v.Words {
		if seen[w] {
			t.Fatalf("word %q twice", w)
		}
		seen[w] = true
	}
	if len(v.Words) != 50000+len(englishWords)+len(domainWords) {
		t.Errorf("%d words", len(v.Words))
	}
	if r := v.Domain["deploy"]; v.Words[r] != "deploy" || r >= v.Domain["cancellation"] {
		t.Errorf("domain ranks wrong: deploy %d, cancellation %d", r, v.Domain["cancellation"])
	}
}

// BenchmarkGenerate reports the generator's throughput (MB/s) on a 64 MiB run.
func BenchmarkGenerate(b *testing.B) {
	opts := Options{Bytes: 64 << 20, Seed: 1}
	b.SetBytes(opts.Bytes)
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(b.TempDir(), "run")
		if _, err := Generate(context.Background(), dir, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppend reports the Appender's throughput, 1000 log records a call.
func BenchmarkAppend(b *testing.B) {
	path := filepath.Join(b.TempDir(), "alice", "alice.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	a := NewAppender(Options{Seed: 1})
	var total int64
	for i := 0; i < b.N; i++ {
		n, err := a.Append(path, 1000)
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	b.SetBytes(total / int64(b.N))
}

// TestCopy: a copy holds the same files with the same bytes, each a file of
// its own (one link).
func TestCopy(t *testing.T) {
	dir := t.TempDir()
	if _, err := Generate(context.Background(), filepath.Join(dir, "run"), Options{Bytes: 64 << 10, Seed: 2, Episodes: 2, Agents: 2}); err != nil {
		t.Fatal(err)
	}
	to, err := Copy(filepath.Join(dir, "run"), dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(filepath.Join(dir, "run"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(dir, "run"), p)
		a, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(to, rel))
		if err != nil {
			return err
		}
		st, err := os.Stat(filepath.Join(to, rel))
		if err != nil {
			return err
		}
		if links, known := linkCount(st); !bytes.Equal(a, b) || (known && links != 1) {
			t.Errorf("%s: copy differs or is linked", rel)
		}
		n++
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walked %d files: %v", n, err)
	}
}
