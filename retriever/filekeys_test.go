package retriever

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"runls/internal/rungen"
	"runls/masking"
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

// fileVerdict decides what it can of the evidence rules from file fs alone
// (nil: none), read from the File: what the keys' verdicts are held to.
func fileVerdict(fs *corpus.File, agent int, f *filter) bm25.Verdict {
	return verdictOf(factsOfFile(fs, f), agent, f)
}

// evidence applies the request's rules to piece d of file fs (spec §5),
// read from the File.
func (e *evidenceFilter) evidence(s *corpus.Segment, d uint32, fs *corpus.File) bool {
	return e.pieceEvidence(s, d, factsOfFile(fs, e.f), fs, fs.ID)
}

// bruteFileVerdict is fileVerdict as it read the File before the files'
// keys (corpus/filekeys.go), kept as their brute force.
func bruteFileVerdict(fs *corpus.File, agent int, f *filter) bm25.Verdict {
	if fs == nil || (agent >= 0 && int(fs.Agent) != agent) || f.excluded(fs) {
		return bm25.RejectAll
	}
	if f.all {
		return bm25.AcceptAll
	}
	current := f.episode != "" && fs.EpNum() == f.episode
	switch {
	case f.scopeEpisode && !current:
		return bm25.RejectAll
	case !fs.Form.IsRecord() && f.window.on:
		return bm25.RejectAll
	case !fs.Conversational() && f.window.on:
		return bm25.CheckEach
	case !fs.Conversational():
		return bm25.AcceptAll
	case !f.records:
		return bm25.RejectAll
	case !current && !f.hasTurn && !f.window.on:
		return bm25.AcceptAll
	}
	return bm25.CheckEach
}

// bruteFileOrder is fileOrder as it read the Files before the keys.
func bruteFileOrder(fa, fb *corpus.File) int {
	if d := corpus.CompareEpisodeNumbers(fa.EpNum(), fb.EpNum()); d != 0 {
		return d
	}
	return strings.Compare(fa.Rel, fb.Rel)
}

// bruteEvidence is the piece rules as they read the File before the keys
// (without the warning, which changes no answer).
func bruteEvidence(f *filter, s *corpus.Segment, d uint32, fs *corpus.File) bool {
	if f.excluded(fs) {
		return false
	}
	if f.all {
		return true
	}
	current := f.episode != "" && fs.EpNum() == f.episode
	if f.scopeEpisode && !current {
		return false
	}
	if f.window.on && !inWindow(fs, s.LineOf(d), f.window) {
		return false
	}
	if !fs.Conversational() {
		return true
	}
	if !f.records {
		return false
	}
	if current {
		if s.FlagsOf(d)&corpus.FlagUnfielded != 0 {
			return false
		}
		c := s.ConvOf(d)
		if !(f.hasConv && c == f.conv) && c != f.dash && !f.allConvs {
			return false
		}
	}
	if f.hasTurn && s.FlagsOf(d)&corpus.FlagReadingMask == flagOfReading(ReadingTold) && s.ToldHashOf(d) == f.turnHash {
		return false
	}
	return true
}

// keyFilters are the filter shapes the differential asks: every evidence
// rule on and off (all; scope run and episode; no episode, each of the
// run's, one with leading zeros, one of none; with and without the
// conversation, one of every conversation; a window on; a turn message;
// files excluded), over the committed state c. The caller holds the lock.
func keyFilters(c *corpus.State) []*filter {
	eps := []string{"", "0", "1", "2", "7", "10", "99"}
	for name := range c.Episodes {
		if n, ok := EpisodeNumber(name); ok && !slices.Contains(eps, n) {
			eps = append(eps, n)
		}
	}
	conv1, has1 := c.Convs.Lookup("conv-1")
	dash, _ := c.Convs.Lookup("-")
	wide, _ := parseTimeWindow("2000-01-01 00:00:00", "")
	narrow, _ := parseTimeWindow("2026-10-21 18:00:00", "2026-10-21 18:00:41")
	exclude := map[*corpus.File]bool{}
	for i, fs := range c.ByID {
		if fs != nil && i%3 == 1 {
			exclude[fs] = true
		}
	}
	var out []*filter
	for _, all := range []bool{false, true} {
		for _, ep := range eps {
			for _, scope := range []bool{false, true} {
				for recs := range 3 {
					for _, w := range []timeWindow{{}, wide, narrow} {
						for _, turn := range []bool{false, true} {
							for _, ex := range []map[*corpus.File]bool{nil, exclude} {
								f := &filter{all: all, episode: ep, scopeEpisode: scope, window: w, exclude: ex}
								if recs > 0 {
									f.records, f.dash = true, dash
									f.conv, f.hasConv = conv1, has1
									f.allConvs = recs == 2
								}
								f.turnHash, f.hasTurn = 12345, turn
								out = append(out, f)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// checkFileKeys holds what the filter and the tie order read of every file
// of ix's committed state through the keys to the brute force's reading of
// the File: every filter shape's verdict (Group) for every agent searched
// and every file id (one past the last too), the piece rules (Check,
// Accept) for the first pieces of each file, and the tie order of every
// pair of files.
func checkFileKeys(t *testing.T, ix *Index, what string) {
	t.Helper()
	checkFileKeysOn(t, ix, what, true)
}

// checkFileKeysOff is checkFileKeys with the keys turned off (as past
// their room): the filter and the tie order read the Files, and must read
// them as the brute force does; the searches answer as with the keys on.
func checkFileKeysOff(t *testing.T, ix *Index, what string, queries ...string) {
	t.Helper()
	ctx := context.Background()
	var on []Result
	for _, q := range queries {
		for _, req := range []Request{{Query: q, TopK: 20}, {Query: q, TopK: 20, Episode: "episode-1", Conversation: "conv-1", Scope: "episode"}} {
			res, err := ix.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			on = append(on, res)
		}
	}
	items := 0
	for _, res := range on {
		items += len(res.Items)
	}
	if items == 0 {
		t.Fatalf("%s: no search found anything: too few to tell", what)
	}
	ix.mu.Lock()
	ix.state.TurnKeysOff()
	ix.mu.Unlock()
	checkFileKeysOn(t, ix, what+", keys off", false)
	i := 0
	for _, q := range queries {
		for _, req := range []Request{{Query: q, TopK: 20}, {Query: q, TopK: 20, Episode: "episode-1", Conversation: "conv-1", Scope: "episode"}} {
			res, err := ix.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res, on[i]) {
				t.Fatalf("%s: %+v with the keys off:\n%+v\nwith them on:\n%+v", what, req, res, on[i])
			}
			i++
		}
	}
}

// checkFileKeysOn is checkFileKeys with the keys on (keysOn) or off.
func checkFileKeysOn(t *testing.T, ix *Index, what string, keysOn bool) {
	t.Helper()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	c := &ix.state
	if _, ok := c.Key(0); ok != keysOn {
		t.Fatalf("%s: the keys are on: %v, want %v", what, ok, keysOn)
	}
	segOf := map[*corpus.Segment]int{}
	for i, s := range c.Segments {
		segOf[s] = i
	}
	agents := []int{-1, len(c.Agents), len(c.Agents) + 5}
	for a := range c.Agents {
		agents = append(agents, a)
	}
	asked, pieces := 0, 0
	for _, f := range keyFilters(c) {
		for _, agent := range agents {
			for id := range uint32(len(c.ByID) + 2) {
				fs := c.File(id)
				e := &evidenceFilter{ix: ix, f: f, agent: agent}
				want := bruteFileVerdict(fs, agent, f)
				if got := e.Group(0, id); got != want {
					t.Fatalf("%s: file %d (%v) agent %d filter %+v: the key's verdict %v, the File's %v", what, id, fs != nil && fs.Rel != "", agent, f, got, want)
				}
				if got := fileVerdict(fs, agent, f); got != want {
					t.Fatalf("%s: file %d agent %d filter %+v: fileVerdict %v, the brute force's %v", what, id, agent, f, got, want)
				}
				asked++
				if fs == nil {
					continue
				}
				for _, r := range fs.Ranges {
					si := segOf[r.Seg]
					for d := r.Lo; d < r.Hi && d < r.Lo+6; d++ {
						if r.Seg.Dead(d) {
							continue
						}
						want := bruteEvidence(f, r.Seg, d, fs)
						if got := e.Check(si, d, id); got != want {
							t.Fatalf("%s: %s piece %d filter %+v: Check %v, the brute force's %v", what, fs.Rel, d, f, got, want)
						}
						wantAccept := want && (agent < 0 || int(fs.Agent) == agent)
						if got := e.Accept(si, d, id); got != wantAccept {
							t.Fatalf("%s: %s piece %d agent %d filter %+v: Accept %v, want %v", what, fs.Rel, d, agent, f, got, wantAccept)
						}
						pieces++
					}
				}
			}
		}
	}
	var live []uint32
	for id, fs := range c.ByID {
		if fs != nil {
			live = append(live, uint32(id))
		}
	}
	for _, a := range live {
		for _, b := range live {
			got, want := fileOrder(c, a, b), bruteFileOrder(c.ByID[a], c.ByID[b])
			if (got < 0) != (want < 0) || (got > 0) != (want > 0) {
				t.Fatalf("%s: fileOrder(%s, %s) = %d, the brute force's %d", what, c.ByID[a].Rel, c.ByID[b].Rel, got, want)
			}
		}
	}
	if len(live) < 2 || pieces == 0 {
		t.Fatalf("%s: %d files, %d pieces asked: too few to tell", what, len(live), pieces)
	}
	t.Logf("%s: %d verdicts, %d pieces, %d files' order", what, asked, pieces, len(live))
}

// TestFileKeysDifferentialSample: the sample run, masked and not, with the
// interpreter (told records, whose turn message the filter reads).
func TestFileKeysDifferentialSample(t *testing.T) {
	root := copyDir(t, filepath.Join("..", "testdata", "sample-run"))
	for _, masked := range []bool{false, true} {
		opts := Options{Root: root, Interpreter: mustRules(t)}
		if masked {
			opts.Masker = masking.HidingOutside(root)
		}
		ix := openTest(t, opts)
		refresh(t, ix)
		checkFileKeys(t, ix, fmt.Sprintf("sample, masked %v", masked))
		checkFileKeysOff(t, ix, fmt.Sprintf("sample, masked %v", masked), "error", "deploy", "timeout retry", "the")
	}
}

// TestFileKeysDifferentialGenerated: a generated run.
func TestFileKeysDifferentialGenerated(t *testing.T) {
	opts := rungen.Options{Bytes: 1 << 20, Seed: 7, Episodes: 3, Agents: 3}
	dir := t.TempDir()
	if _, err := rungen.Generate(context.Background(), dir, opts); err != nil {
		t.Fatal(err)
	}
	ix := openTest(t, Options{Root: dir})
	refresh(t, ix)
	checkFileKeys(t, ix, "generated")
	checkFileKeysOff(t, ix, "generated", rungen.Queries(opts, 10)...)
}

// TestFileKeysFollowTheRun: every form of file (the run's own log and
// history, a foreign log, notes, a binary file; episodes with leading zeros,
// 0, 10, files outside any episode and agent), then files grown, added (a
// new episode, a new agent), removed, replaced (read from the start), a
// foreign log rewritten in the run's own layout and back, an index
// restored from its cache entry and updated after: after each, the keys
// read as the Files.
func TestFileKeysFollowTheRun(t *testing.T) {
	foreign := "2026-03-02 09:14:07,118 INFO [main] org.x.App: started quickly\n2026-03-02 09:14:08,000 INFO [main] org.x.App: loaded plums\n"
	own := rec("conv-1", "Alice said: plums ripe") + rec("-", "Alice chat started") +
		"2026-10-21 18:00:02 [running] Alice unfielded plums\n"
	files := map[string]string{
		"episode-1/alice/alice.log":      own,
		"episode-1/alice/alice.history":  rec("conv-1", "Alice was told: plums please") + rec("conv-2", "Alice said: plums"),
		"episode-1/tools/app.log":        foreign,
		"episode-1/alice/notes.md":       "plums noted\n",
		"episode-007/bob/bob.log":        own,
		"episode-007/bob/notes.txt":      "bob plums\n",
		"episode-0/carol/carol.history":  rec("conv-1", "Carol said: plums"),
		"episode-10/alice/alice.log":     own,
		"episode-2/alice/alice.log":      own,
		"episode-2/summary.txt":          "episode plums summary\n",
		"archive/alice/notes.md":         "archived plums\n",
		"run-notes.txt":                  "run plums\n",
		"episode-2/alice/blob.bin":       "plums\x00\x01\x02",
		"episode-2/alice/scratch/old.md": "old plums\n",
	}
	run := writeRun(t, files)
	opts := Options{Root: run, Interpreter: mustRules(t)}
	cache := cacheRoot(t)
	ix, _ := reopened(t, opts, cache)
	checkFileKeys(t, ix, "first index")

	steps := []struct {
		name string
		do   func()
	}{
		{"grown", func() {
			appendFile(t, run, "episode-1/alice/alice.log", rec("conv-2", "Alice said: more plums"))
			appendFile(t, run, "episode-1/alice/notes.md", "more plums\n")
		}},
		{"added", func() {
			writeFile(t, run, "episode-5/dave/dave.log", own)
			writeFile(t, run, "episode-05/erin/notes.md", "erin plums\n")
			writeFile(t, run, "episode-1/alice/aa.md", "first plums\n")
			writeFile(t, run, "episode-10/zed/zed.history", rec("conv-1", "Zed said: plums"))
		}},
		{"removed", func() {
			must(t, os.Remove(filepath.Join(run, "episode-1/alice/notes.md")))
			must(t, os.RemoveAll(filepath.Join(run, "episode-007")))
		}},
		{"replaced", func() {
			p := filepath.Join(run, "episode-2/alice/alice.log")
			must(t, os.Remove(p))
			writeFile(t, run, "episode-2/alice/alice.log", own+own)
		}},
		{"foreign log rewritten in the own layout", func() {
			writeFile(t, run, "episode-1/tools/app.log", own)
		}},
		{"own log rewritten as a foreign one", func() {
			writeFile(t, run, "episode-10/alice/alice.log", foreign)
		}},
		{"removed and added again", func() {
			must(t, os.Remove(filepath.Join(run, "run-notes.txt")))
			refresh(t, ix)
			writeFile(t, run, "run-notes.txt", "run plums again\n")
		}},
	}
	for _, s := range steps {
		s.do()
		refresh(t, ix)
		checkFileKeys(t, ix, s.name)
	}
	ix.Close()

	// Restored from the entry, then updated.
	re, restored := reopened(t, opts, cache)
	if !restored {
		t.Fatal("not restored from the cache entry")
	}
	checkFileKeys(t, re, "restored")
	writeFile(t, run, "episode-3/alice/alice.log", own)
	must(t, os.Remove(filepath.Join(run, "episode-2/summary.txt")))
	refresh(t, re)
	checkFileKeys(t, re, "restored, then updated")
}

// TestFileKeysRandomRun: random runs of many files in random folders, grown,
// added and removed in random updates (the keys' placing of new files
// among many).
func TestFileKeysRandomRun(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 1))
	run := t.TempDir()
	rel := func() string {
		ep := []string{"episode-1", "episode-2", "episode-10", "episode-010", "episode-3", "misc"}[r.IntN(6)]
		return fmt.Sprintf("%s/ag%d/f%02d%s", ep, r.IntN(6), r.IntN(30), []string{".log", ".history", ".md"}[r.IntN(3)])
	}
	ix := openTest(t, Options{Root: run})
	for round := range 6 {
		for range 60 {
			p := rel()
			switch r.IntN(4) {
			case 0:
				_ = os.Remove(filepath.Join(run, p))
			default:
				line := rec("conv-1", fmt.Sprintf("Alice said: plums %d", r.IntN(9)))
				if _, err := os.Stat(filepath.Join(run, p)); err == nil {
					appendFile(t, run, p, line)
				} else {
					writeFile(t, run, p, line)
				}
			}
		}
		refresh(t, ix)
		checkFileKeysOrder(t, ix, fmt.Sprintf("round %d", round))
	}
}

// checkFileKeysOrder is checkFileKeys's tie order and one filter's
// verdicts alone (for many files).
func checkFileKeysOrder(t *testing.T, ix *Index, what string) {
	t.Helper()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	c := &ix.state
	var live []uint32
	for id, fs := range c.ByID {
		if fs != nil {
			live = append(live, uint32(id))
		}
	}
	slices.SortFunc(live, func(a, b uint32) int { return bruteFileOrder(c.ByID[a], c.ByID[b]) })
	for i := 1; i < len(live); i++ {
		if fileOrder(c, live[i-1], live[i]) >= 0 || fileOrder(c, live[i], live[i-1]) <= 0 {
			t.Fatalf("%s: %s and %s out of order", what, c.ByID[live[i-1]].Rel, c.ByID[live[i]].Rel)
		}
	}
	f := &filter{episode: "10", records: true, scopeEpisode: true}
	for _, id := range live {
		e := &evidenceFilter{ix: ix, f: f, agent: -1}
		if got, want := e.Group(0, id), bruteFileVerdict(c.ByID[id], -1, f); got != want {
			t.Fatalf("%s: %s: verdict %v, want %v", what, c.ByID[id].Rel, got, want)
		}
	}
	if len(live) < 10 {
		t.Fatalf("%s: %d files", what, len(live))
	}
}

// copyDir copies the files under src into a new folder.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFile(t, dst, filepath.ToSlash(rel), string(b))
		return nil
	})
	must(t, err)
	return dst
}
