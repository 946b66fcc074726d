package retriever

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"runls/masking"
	"runls/retriever/internal/corpus"
)

// Tests of following the files (spec §7). Each change is checked three ways:
// the exact pieces the index holds after it (listed from the index's own
// columns, the text read back from the file), the BM25 statistics recomputed
// from the live pieces, and an index built from scratch on the same files,
// which the followed index must equal piece for piece.

const (
	hist = "episode-1/a/a.history"
	note = "episode-1/a/notes.txt"
)

// recCol is the byte column of a history record's evidence text.
var recCol = len("2026-10-21 18:00:00 [running] [c1] ")

func TestFollowChanges(t *testing.T) {
	rules := mustRules(t)
	cases := []struct {
		name   string
		files  map[string]string
		interp bool
		change func(t *testing.T, root string)
		want   []string
		logged []string // what is logged, level and message
	}{{
		name:   "append to a plain file",
		files:  map[string]string{note: "apple one\n"},
		change: func(t *testing.T, root string) { appendFile(t, root, note, "apple two\n") },
		want:   []string{note + ":0:0 note apple one", note + ":1:0 note apple two"},
	}, {
		name:   "append records",
		files:  map[string]string{hist: rec("c1", "Alice apple one")},
		change: func(t *testing.T, root string) { appendFile(t, root, hist, rec("c2", "Alice apple two")) },
		want: []string{
			fmt.Sprintf("%s:0:%d note Alice apple one [c1]", hist, recCol),
			fmt.Sprintf("%s:1:%d note Alice apple two [c2]", hist, recCol),
		},
	}, {
		name:   "a write that ends in the middle of a line, then the rest of it",
		files:  map[string]string{note: "apple one\napple tw"},
		change: func(t *testing.T, root string) { appendFile(t, root, note, "o three\n") },
		want:   []string{note + ":0:0 note apple one", note + ":1:0 note apple two three"},
	}, {
		name:   "a record line that ends in the middle, then the rest of it",
		files:  map[string]string{hist: rec("c1", "Alice apple one") + "2026-10-21 18:00:01 [running] [c1] Alice ap"},
		change: func(t *testing.T, root string) { appendFile(t, root, hist, "ple two\n") },
		want: []string{
			fmt.Sprintf("%s:0:%d note Alice apple one [c1]", hist, recCol),
			fmt.Sprintf("%s:1:%d note Alice apple two [c1]", hist, recCol),
		},
	}, {
		name:   "a told record that gains a continuation line keeps its reading",
		files:  map[string]string{hist: rec("c1", "Alice was told: apple one")},
		interp: true,
		change: func(t *testing.T, root string) { appendFile(t, root, hist, "  apple two\n") },
		want: []string{
			fmt.Sprintf("%s:0:%d told apple one [c1]", hist, recCol+len("Alice was told: ")),
			hist + ":1:2 told apple two [c1]",
		},
	}, {
		name:   "a record's continuation lines arrive in separate writes, ending mid-line",
		files:  map[string]string{hist: rec("c1", "Alice said: apple one") + "  apple"},
		interp: true,
		change: func(t *testing.T, root string) { appendFile(t, root, hist, " two\n  apple three\n") },
		want: []string{
			fmt.Sprintf("%s:0:%d said apple one [c1]", hist, recCol+len("Alice said: ")),
			hist + ":1:2 said apple two [c1]",
			hist + ":2:2 said apple three [c1]",
		},
	}, {
		name:   "a record that becomes left out when its line completes",
		files:  map[string]string{hist: rec("c1", "Alice apple one") + "2026-10-21 18:00:01 [running] [c1] Alice chat sta"},
		interp: true,
		change: func(t *testing.T, root string) { appendFile(t, root, hist, "rted\n") },
		want:   []string{fmt.Sprintf("%s:0:%d note Alice apple one [c1]", hist, recCol)},
	}, {
		name:  "shrink",
		files: map[string]string{note: "apple one\napple two\n"},
		change: func(t *testing.T, root string) {
			must(t, os.Truncate(filepath.Join(root, note), int64(len("apple one\n"))))
		},
		want: []string{note + ":0:0 note apple one"},
	}, {
		name:  "shrink then grow past the old size",
		files: map[string]string{note: "apple one\napple two\n"},
		change: func(t *testing.T, root string) {
			must(t, os.Truncate(filepath.Join(root, note), 0))
			appendFile(t, root, note, "pear one\npear two\npear three\n")
		},
		want: []string{note + ":0:0 note pear one", note + ":1:0 note pear two", note + ":2:0 note pear three"},
	}, {
		name:  "replaced: another file renamed over it",
		files: map[string]string{note: "apple one\napple two\n"},
		change: func(t *testing.T, root string) {
			writeFile(t, root, "episode-1/a/new.tmp", "apple one\napple two\napple three\n")
			must(t, os.Rename(filepath.Join(root, "episode-1/a/new.tmp"), filepath.Join(root, note)))
		},
		want: []string{note + ":0:0 note apple one", note + ":1:0 note apple two", note + ":2:0 note apple three"},
	}, {
		name:   "rewritten in place with the same size",
		files:  map[string]string{note: "apple one\napple two\n"},
		change: func(t *testing.T, root string) { writeFile(t, root, note, "apple one\npear  two\n") },
		want:   []string{note + ":0:0 note apple one", note + ":1:0 note pear  two"},
	}, {
		// As when the write comes within the clock tick of the last read.
		name:  "rewritten in place with the same size and time",
		files: map[string]string{note: "apple one\napple two\n"},
		change: func(t *testing.T, root string) {
			p := filepath.Join(root, note)
			st, err := os.Stat(p)
			must(t, err)
			writeFile(t, root, note, "apple one\npear  two\n")
			must(t, os.Chtimes(p, st.ModTime(), st.ModTime()))
		},
		want: []string{note + ":0:0 note apple one", note + ":1:0 note pear  two"},
	}, {
		name:   "rewritten in place at its head, same size",
		files:  map[string]string{note: "apple one\napple two\n"},
		change: func(t *testing.T, root string) { writeFile(t, root, note, "pearr one\napple two\n") },
		want:   []string{note + ":0:0 note pearr one", note + ":1:0 note apple two"},
	}, {
		name:  "rewritten in place and larger",
		files: map[string]string{note: "apple one\napple two\n"},
		change: func(t *testing.T, root string) {
			writeFile(t, root, note, "apple one\npear  two\napple three\n")
		},
		want: []string{note + ":0:0 note apple one", note + ":1:0 note pear  two", note + ":2:0 note apple three"},
	}, {
		name:   "deleted",
		files:  map[string]string{note: "apple one\n", "episode-1/a/other.txt": "apple other\n"},
		change: func(t *testing.T, root string) { must(t, os.Remove(filepath.Join(root, note))) },
		want:   []string{"episode-1/a/other.txt:0:0 note apple other"},
	}, {
		name:   "new file",
		files:  map[string]string{note: "apple one\n"},
		change: func(t *testing.T, root string) { writeFile(t, root, "episode-1/a/deep/new.txt", "apple new\n") },
		want:   []string{note + ":0:0 note apple one", "episode-1/a/deep/new.txt:0:0 note apple new"},
	}, {
		name:   "new agent folder",
		files:  map[string]string{note: "apple one\n"},
		change: func(t *testing.T, root string) { writeFile(t, root, "episode-1/b/b.txt", "apple bee\n") },
		want:   []string{note + ":0:0 note apple one", "episode-1/b/b.txt:0:0 note apple bee"},
	}, {
		name:   "new episode folder",
		files:  map[string]string{note: "apple one\n"},
		change: func(t *testing.T, root string) { writeFile(t, root, "episode-2/a/a.txt", "apple two\n") },
		want:   []string{note + ":0:0 note apple one", "episode-2/a/a.txt:0:0 note apple two"},
	}, {
		name:  "a folder replaced by a file",
		files: map[string]string{note: "apple one\n", "episode-1/a/sub/x.txt": "apple sub\n"},
		change: func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "episode-1/a/sub")))
			writeFile(t, root, "episode-1/a/sub", "apple file\n")
		},
		want:   []string{note + ":0:0 note apple one", "episode-1/a/sub:0:0 note apple file"},
		logged: []string{"info a folder was replaced by a file; the evidence of its files is dropped"},
	}, {
		name:  "an agent folder replaced by a file",
		files: map[string]string{note: "apple one\n", "episode-1/b/x.txt": "apple bee\n"},
		change: func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "episode-1/b")))
			writeFile(t, root, "episode-1/b", "apple file\n")
		},
		want:   []string{note + ":0:0 note apple one"},
		logged: []string{"info a folder was replaced by a file; the evidence of its files is dropped"},
	}, {
		name:  "a file replaced by a folder",
		files: map[string]string{note: "apple one\n", "episode-1/a/x": "apple x\n"},
		change: func(t *testing.T, root string) {
			must(t, os.Remove(filepath.Join(root, "episode-1/a/x")))
			writeFile(t, root, "episode-1/a/x/y.txt", "apple y\n")
		},
		want: []string{note + ":0:0 note apple one", "episode-1/a/x/y.txt:0:0 note apple y"},
	}, {
		name:   "a write that ends between CR and LF",
		files:  map[string]string{note: "apple one\r\napple two\r"},
		change: func(t *testing.T, root string) { appendFile(t, root, note, "\napple three\r\n") },
		want:   []string{note + ":0:0 note apple one", note + ":1:0 note apple two", note + ":2:0 note apple three"},
	}, {
		name:   "a write that ends inside a UTF-8 character",
		files:  map[string]string{note: "apple caf\xc3"},
		change: func(t *testing.T, root string) { appendFile(t, root, note, "\xa9 ok\n") },
		want:   []string{note + ":0:0 note apple caf\u00e9 ok"},
	}, {
		name:  "a long line that grows past a piece",
		files: map[string]string{note: "apple " + strings.Repeat("x", MaxPieceChars)},
		change: func(t *testing.T, root string) {
			appendFile(t, root, note, strings.Repeat("y", 10)+" pear\n")
		},
		want: []string{note + ":0:0 note apple " + strings.Repeat("x", MaxPieceChars-6),
			fmt.Sprintf("%s:0:%d note %s pear", note, MaxPieceChars, strings.Repeat("x", 6)+strings.Repeat("y", 10))},
	}, {
		name:   "appends across read blocks",
		files:  map[string]string{note: bigNotes(ReadBlockBytes + ReadBlockBytes/2)},
		change: func(t *testing.T, root string) { appendFile(t, root, note, bigNotes(ReadBlockBytes)) },
	}, {
		name: "a record longer than the pending tail kept in memory gains lines",
		files: map[string]string{hist: rec("c1", "Alice apple one") + rec("c1", "Alice said: apple two") +
			strings.Repeat("  apple continued\n", 2*corpus.MaxTailBytes/18)},
		interp: true,
		change: func(t *testing.T, root string) {
			appendFile(t, root, hist, "  apple last\n"+rec("c1", "Alice apple three"))
		},
	}, {
		name:   "a text file that becomes binary",
		files:  map[string]string{note: "apple one\n"},
		change: func(t *testing.T, root string) { appendFile(t, root, note, "apple \x00 two\n") },
		want:   []string{},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := writeRun(t, c.files)
			opts := Options{Root: root}
			if c.interp {
				opts.Interpreter = rules
			}
			core, logs := observer.New(zap.InfoLevel)
			ix := openTest(t, Options{Root: root, Interpreter: opts.Interpreter, Logger: zap.New(core)})
			assertFollowed(t, ix, opts, nil)
			c.change(t, root)
			assertFollowed(t, ix, opts, c.want)
			// A search with nothing changed changes nothing.
			assertFollowed(t, ix, opts, c.want)
			var logged []string
			for _, e := range logs.All() {
				logged = append(logged, e.Level.String()+" "+e.Message)
			}
			if !slices.Equal(logged, c.logged) {
				t.Fatalf("logged %q, want %q", logged, c.logged)
			}
		})
	}
}

// TestFollowMasking: a record that grows is masked again whole (spec §8): a
// key block whose lines arrive in separate writes is never searchable.
func TestFollowMasking(t *testing.T) {
	t.Run("record", func(t *testing.T) {
		root := writeRun(t, map[string]string{hist: rec("c1", "Alice apple BEGIN kiwi")})
		opts := Options{Root: root, Masker: testMasker{}}
		ix := openTest(t, opts)
		assertFollowed(t, ix, opts, []string{fmt.Sprintf("%s:0:%d note Alice apple <secret> [c1]", hist, recCol)})
		appendFile(t, root, hist, "  kiwi two\n")
		assertFollowed(t, ix, opts, []string{
			fmt.Sprintf("%s:0:%d note Alice apple <secret> [c1]", hist, recCol),
			hist + ":1:2 note <secret> [c1]",
		})
		appendFile(t, root, hist, "  kiwi END apple after\n")
		assertFollowed(t, ix, opts, []string{
			fmt.Sprintf("%s:0:%d note Alice apple <secret> [c1]", hist, recCol),
			hist + ":1:2 note <secret> [c1]",
			hist + ":2:2 note <secret> apple after [c1]",
		})
		if items := search(t, ix, allEvidence("kiwi begin end two")); len(items) != 0 {
			t.Fatalf("masked text is searchable: %q", texts(items))
		}
	})
	t.Run("plain file", func(t *testing.T) {
		root := writeRun(t, map[string]string{note: "apple one\napple BEGIN kiwi\n"})
		opts := Options{Root: root, Masker: testMasker{}}
		ix := openTest(t, opts)
		assertFollowed(t, ix, opts, []string{note + ":0:0 note apple one", note + ":1:0 note apple <secret>"})
		appendFile(t, root, note, "kiwi two\nkiwi E")
		assertFollowed(t, ix, opts, []string{note + ":0:0 note apple one", note + ":1:0 note apple <secret>",
			note + ":2:0 note <secret>", note + ":3:0 note <secret>"})
		appendFile(t, root, note, "ND apple after\napple three\n")
		assertFollowed(t, ix, opts, []string{note + ":0:0 note apple one", note + ":1:0 note apple <secret>",
			note + ":2:0 note <secret>", note + ":3:0 note <secret> apple after", note + ":4:0 note apple three"})
		if items := search(t, ix, allEvidence("kiwi begin end two")); len(items) != 0 {
			t.Fatalf("masked text is searchable: %q", texts(items))
		}
	})
}

// TestFollowToldRecordWhole: a told record whose continuation arrives later is
// one record: with the turn message of the whole record it is not returned,
// and with its first line only it is.
func TestFollowToldRecordWhole(t *testing.T) {
	root := writeRun(t, map[string]string{hist: rec("c1", "Alice was told: apple one")})
	ix := openTest(t, Options{Root: root, Interpreter: mustRules(t)})
	req := Request{TurnMessage: "apple one", Episode: "episode-1", Conversation: "c1", TopK: 10}
	if got := texts(search(t, ix, req)); len(got) != 0 {
		t.Fatalf("the told turn message was returned: %q", got)
	}
	appendFile(t, root, hist, "  apple two\n")
	if got := sortedTexts(search(t, ix, req)); !slices.Equal(got, []string{"apple one", "apple two"}) {
		t.Fatalf("after the record grew, the turn message is no longer its whole text; got %q", got)
	}
	req.TurnMessage = "apple one\napple two"
	if got := texts(search(t, ix, req)); len(got) != 0 {
		t.Fatalf("the whole told record matches the turn message but was returned: %q", got)
	}
}

// testMasker hides from "BEGIN" to "END" (over lines), like a key block; a
// block without its END is hidden to the end of the text and left open.
type testMasker struct{}

func (testMasker) Mask(text string) ([]masking.Span, int) {
	var spans []masking.Span
	for i := 0; ; {
		b := strings.Index(text[i:], "BEGIN")
		if b < 0 {
			return spans, -1
		}
		b += i
		e := strings.Index(text[b:], "END")
		if e < 0 {
			return append(spans, masking.Span{Start: b, End: len(text), Placeholder: "<secret>"}), b
		}
		e += b + len("END")
		spans = append(spans, masking.Span{Start: b, End: e, Placeholder: "<secret>"})
		i = e
	}
}

// TestIncrementalReads proves that reads are incremental: after indexing,
// appending N bytes makes the next search read exactly N content bytes, and
// only a few bytes to check for a rewrite.
func TestIncrementalReads(t *testing.T) {
	big := strings.Repeat("apple filler line\n", 2000) // past the binary sniff
	for _, rel := range []string{note, hist} {
		t.Run(rel, func(t *testing.T) {
			content := big
			if rel == hist {
				content = strings.Repeat(rec("c1", "Alice apple filler"), 500)
			}
			root := writeRun(t, map[string]string{rel: content, "episode-1/b/other.txt": big})
			// A file written within runfs.RacyWindow is checked on each search:
			// make the other file's time old, so only the appended file is.
			old := time.Now().Add(-time.Hour)
			must(t, os.Chtimes(filepath.Join(root, "episode-1/b/other.txt"), old, old))
			ix := openTest(t, Options{Root: root})
			search(t, ix, allEvidence("apple"))
			c0, k0 := ix.BytesRead()
			if c0 != int64(len(content)+len(big)) {
				t.Fatalf("first search read %d content bytes, want %d", c0, len(content)+len(big))
			}
			for i, add := range []string{"apple more\n", rec("c1", "Alice apple more"), strings.Repeat("x", 3000) + "\n"} {
				appendFile(t, root, rel, add)
				search(t, ix, allEvidence("apple"))
				c1, k1 := ix.BytesRead()
				if c1-c0 != int64(len(add)) {
					t.Fatalf("append %d: next search read %d content bytes, want %d", i, c1-c0, len(add))
				}
				// The head and the window before the read position, and the
				// new window when the bytes read are fewer than it.
				if k1-k0 > 3*corpus.CheckBytes {
					t.Fatalf("append %d: next search read %d bytes to check for a rewrite, want at most %d", i, k1-k0, 3*corpus.CheckBytes)
				}
				c0, k0 = c1, k1
			}
			// Nothing appended: nothing read (the check of a racy file aside).
			search(t, ix, allEvidence("apple"))
			if c1, k1 := ix.BytesRead(); c1 != c0 || k1-k0 > 2*corpus.CheckBytes {
				t.Fatalf("a search with nothing appended read %d content and %d check bytes", c1-c0, k1-k0)
			}
		})
	}
}

// TestFileVanishesBeforeRead: a file deleted between its stat and its read is
// dropped without a WARN and without wedging the index.
func TestFileVanishesBeforeRead(t *testing.T) {
	root := writeRun(t, map[string]string{note: "apple one\n", "episode-1/a/keep.txt": "apple keep\n"})
	core, logs := observer.New(zap.InfoLevel)
	opts := Options{Root: root}
	ix := openTest(t, Options{Root: root, Logger: zap.New(core)})
	assertFollowed(t, ix, opts, nil)
	appendFile(t, root, note, "apple two\n")
	var once sync.Once
	ix.fw.beforeRead = func(rel string) {
		if rel == note {
			once.Do(func() { must(t, os.Remove(filepath.Join(root, note))) })
		}
	}
	search(t, ix, allEvidence("apple"))
	if got := livePieces(t, ix); !slices.Equal(got, []string{"episode-1/a/keep.txt:0:0 note apple keep"}) {
		t.Fatalf("after the file vanished: %q", got)
	}
	writeFile(t, root, note, "apple back\n")
	assertFollowed(t, ix, opts, []string{"episode-1/a/keep.txt:0:0 note apple keep", note + ":0:0 note apple back"})
	if logs.Len() != 1 || logs.All()[0].Level != zap.InfoLevel {
		t.Fatalf("want one INFO for the vanished file, got %v", logs.All())
	}
}

// TestTruncatedWhileRead: a file truncated between two blocks of its read is
// read again from its start by the next search.
func TestTruncatedWhileRead(t *testing.T) {
	var sb strings.Builder
	for i := 0; sb.Len() < 3*ReadBlockBytes; i++ {
		fmt.Fprintf(&sb, "apple line %d\n", i)
	}
	// What the file holds after: shorter than it was, longer than the first
	// block, with the same head, so that only the shrink during the read
	// tells that the block already read is stale.
	var after strings.Builder
	for i := 0; after.Len() < 2*ReadBlockBytes; i++ {
		if i < 10 {
			fmt.Fprintf(&after, "apple line %d\n", i)
		} else {
			fmt.Fprintf(&after, "pear line %d\n", i)
		}
	}
	for _, c := range []struct {
		name, after string
		want        []string
	}{
		{"to a few lines", "pear one\npear two\n", []string{note + ":0:0 note pear one", note + ":1:0 note pear two"}},
		{"to fewer blocks, same head", after.String(), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := writeRun(t, map[string]string{note: sb.String()})
			opts := Options{Root: root}
			core, logs := observer.New(zap.InfoLevel)
			ix := openTest(t, Options{Root: root, Logger: zap.New(core)})
			var once sync.Once
			ix.fw.beforeBlock = func(rel string, pos int64) error {
				if pos >= ReadBlockBytes {
					once.Do(func() { must(t, os.WriteFile(filepath.Join(root, note), []byte(c.after), 0o644)) })
				}
				return nil
			}
			// The search during which it happens returns no stale evidence:
			// pieces whose text changed are left out when read back.
			for _, it := range search(t, ix, allEvidence("line")) {
				if !strings.Contains(c.after, it.Text+"\n") {
					t.Errorf("stale evidence: %q", it.Text)
				}
			}
			ix.fw.beforeBlock = nil
			assertFollowed(t, ix, opts, c.want)
			if logs.Len() != 1 || logs.All()[0].Level != zap.InfoLevel {
				t.Fatalf("want one INFO for the file that shrank, got %v", logs.All())
			}
		})
	}
}

// TestReadFailsHalfWay: a read that fails after some blocks were ingested
// leaves none of their pieces behind, leaves the file out with one WARN, and
// the next search reads it again.
func TestReadFailsHalfWay(t *testing.T) {
	big := bigNotes(3 * ReadBlockBytes)
	root := writeRun(t, map[string]string{note: big, "episode-1/b/b.txt": "apple bee\n"})
	core, logs := observer.New(zap.WarnLevel)
	opts := Options{Root: root}
	ix := openTest(t, Options{Root: root, Logger: zap.New(core)})
	fail := func(rel string, pos int64) error {
		if rel == note && pos >= 2*ReadBlockBytes {
			return syscall.EIO
		}
		return nil
	}
	// One worker, so that the failed read shares its batch with another
	// file's update, which is committed.
	ix.workers = 1
	only := []string{"episode-1/b/b.txt:0:0 note apple bee"}
	// A new file, then a file read again from its start (rewritten), each
	// while another file changes too.
	for i, change := range []func(){func() {}, func() { writeFile(t, root, note, "pear\n"+big) }} {
		ix.fw.beforeBlock = fail
		change()
		if i > 0 {
			appendFile(t, root, "episode-1/b/b.txt", "apple bee two\n")
			only = append(only, "episode-1/b/b.txt:1:0 note apple bee two")
		}
		for range 2 {
			search(t, ix, allEvidence("apple"))
			if got := livePieces(t, ix); !slices.Equal(got, only) {
				t.Fatalf("after a failed read: %d pieces, want %q", len(got), only)
			}
			checkStats(t, ix)
		}
		ix.fw.beforeBlock = nil
		assertFollowed(t, ix, opts, nil)
		if n := len(livePieces(t, ix)); n < 100000 {
			t.Fatalf("after the failure passed: %d pieces", n)
		}
	}
	if logs.Len() != 2 {
		t.Fatalf("want one WARN per failure, got %v", logs.All())
	}
}

// TestUnreadableFile: a file that cannot be read is left out with one WARN and
// read again once it can be. Root reads any file, so as root the test runs
// itself again as nobody.
func TestUnreadableFile(t *testing.T) {
	if os.Getuid() == 0 {
		runAsNobody(t, "TestUnreadableFile")
		return
	}
	root := writeRun(t, map[string]string{note: "apple one\n", "episode-1/b/b.txt": "apple bee\n", "episode-1/c/c.txt": "apple sea\n"})
	core, logs := observer.New(zap.WarnLevel)
	opts := Options{Root: root}
	ix := openTest(t, Options{Root: root, Logger: zap.New(core)})
	all := []string{note + ":0:0 note apple one", "episode-1/b/b.txt:0:0 note apple bee", "episode-1/c/c.txt:0:0 note apple sea"}
	assertFollowed(t, ix, opts, all)

	must(t, os.Chmod(filepath.Join(root, note), 0))
	must(t, os.Chmod(filepath.Join(root, "episode-1/c"), 0))
	for range 3 {
		search(t, ix, allEvidence("apple"))
		if got := livePieces(t, ix); !slices.Equal(got, []string{"episode-1/b/b.txt:0:0 note apple bee"}) {
			t.Fatalf("with a file and a folder unreadable: %q", got)
		}
	}
	if logs.Len() != 2 {
		t.Fatalf("want one WARN for the file and one for the folder, got %v", logs.All())
	}
	must(t, os.Chmod(filepath.Join(root, note), 0o644))
	must(t, os.Chmod(filepath.Join(root, "episode-1/c"), 0o755))
	assertFollowed(t, ix, opts, all)
}

// runAsNobody runs test again in a child process as the user nobody, for
// tests of permissions, which root ignores.
func runAsNobody(t *testing.T, test string) {
	t.Helper()
	if os.Getenv("RUNLS_TEST_NOBODY") != "" {
		t.Skip("cannot drop root")
	}
	dir, err := os.MkdirTemp("", "runls-nobody-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o777))
	exe, err := os.Executable()
	must(t, err)
	bin, err := os.ReadFile(exe)
	must(t, err)
	self := filepath.Join(dir, "retriever.test")
	must(t, os.WriteFile(self, bin, 0o755))
	cmd := exec.Command(self, "-test.run=^"+test+"$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RUNLS_TEST_NOBODY=1", "TMPDIR="+dir, "GOCOVERDIR=")
	if cmd.SysProcAttr = nobodyAttr(); cmd.SysProcAttr == nil {
		t.Skip("no user nobody to run as on this system")
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Skipf("cannot run as nobody: %v", err)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	t.Logf("ran as nobody:\n%s", out)
}

// TestChangesNotified: every update tells subscribers the record files that
// changed, deleted ones included, whichever update found them.
func TestChangesNotified(t *testing.T) {
	root := writeRun(t, map[string]string{hist: rec("c1", "Alice apple"), "episode-1/a/a.log": "", note: "apple\n"})
	ix := openTest(t, Options{Root: root})
	var mu sync.Mutex
	var got [][]string
	defer ix.subs.add(func(c Changes) {
		mu.Lock()
		got = append(got, c.Files)
		mu.Unlock()
	})()
	abs := func(rel string) string { return filepath.Join(ix.Root(), filepath.FromSlash(rel)) }
	search(t, ix, allEvidence("apple"))
	appendFile(t, root, hist, rec("c1", "Alice pear"))
	appendFile(t, root, note, "pear\n")
	search(t, ix, allEvidence("apple"))
	must(t, os.Remove(filepath.Join(root, "episode-1/a/a.log")))
	search(t, ix, allEvidence("apple"))
	search(t, ix, allEvidence("apple")) // nothing changed: no call
	mu.Lock()
	defer mu.Unlock()
	want := [][]string{{abs("episode-1/a/a.history"), abs("episode-1/a/a.log")}, {abs(hist)}, {abs("episode-1/a/a.log")}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("notified %q\nwant     %q", got, want)
	}
}

// TestAppendWhileSearching appends from one goroutine while another searches,
// for a bounded number of rounds; every result is consistent: each piece is a
// line that was written (or the start of one that is being written), none
// twice, none lost from one search to the next, and the statistics are those
// of the live pieces at every point. Run it with -race.
func TestAppendWhileSearching(t *testing.T) {
	t.Run("walked", func(t *testing.T) { appendWhileSearching(t, false) })
	// With a watcher, a search's answer is made while it waits for the
	// barrier, and made again when the update commits (see fresh).
	t.Run("watched", func(t *testing.T) { appendWhileSearching(t, true) })
}

func appendWhileSearching(t *testing.T, watched bool) {
	root := writeRun(t, map[string]string{hist: "", note: ""})
	opts := Options{Root: root, Interpreter: mustRules(t)}
	ix := openTest(t, opts)
	if watched {
		if _, err := ix.Refresh(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		startWatch(t, ix)
		waitWatched(t, ix, 3)
	}
	const rounds = 150
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range rounds {
			// A record in two writes, its continuation in a third, and a
			// note line in two.
			appendFile(t, root, hist, fmt.Sprintf("2026-10-21 18:00:00 [running] [c1] Alice said: apple h%d", i))
			appendFile(t, root, hist, "\n  apple c"+strconv.Itoa(i)+"\n")
			appendFile(t, root, note, "apple n")
			appendFile(t, root, note, strconv.Itoa(i)+"\n")
		}
	}()
	prev := 0
	check := func(items []Item) {
		seen := map[string]bool{}
		for _, it := range items {
			if seen[it.Text] {
				t.Errorf("piece given twice: %q", it.Text)
			}
			seen[it.Text] = true
			if it.Text == "apple n" {
				continue // a note line without its line end yet: evidence too
			}
			var kind byte
			var n int
			if _, err := fmt.Sscanf(it.Text, "apple %c%d", &kind, &n); err != nil || n >= rounds || !strings.Contains("hcn", string(kind)) {
				t.Errorf("piece %q is not a line that was written", it.Text)
			}
		}
		if len(items) < prev {
			t.Errorf("a search found %d pieces, fewer than the one before (%d)", len(items), prev)
		}
		prev = len(items)
	}
	for searching := true; searching; {
		select {
		case <-done:
			searching = false
		default:
		}
		check(search(t, ix, allEvidence("apple")))
		checkStats(t, ix) // under the read lock: a committed state
	}
	items := search(t, ix, allEvidence("apple"))
	check(items)
	if len(items) != 3*rounds {
		t.Fatalf("after the appends: %d pieces, want %d", len(items), 3*rounds)
	}
	assertFollowed(t, ix, opts, nil)
}

// TestFileBeyondBatchLimit: a file with more pieces than a batch can
// number is left out with one WARN, the other files' pieces are indexed,
// and the file is indexed once it fits.
func TestFileBeyondBatchLimit(t *testing.T) {
	var many strings.Builder
	for i := range 8 {
		fmt.Fprintf(&many, "apple %d\n", i)
	}
	root := writeRun(t, map[string]string{note: many.String(), "episode-1/b/b.txt": "apple bee\n"})
	core, logs := observer.New(zap.WarnLevel)
	ix := openTest(t, Options{Root: root, Logger: zap.New(core)})
	ix.batchDocs = 5
	only := []string{"episode-1/b/b.txt:0:0 note apple bee"}
	for range 2 {
		search(t, ix, allEvidence("apple"))
		if got := livePieces(t, ix); !slices.Equal(got, only) {
			t.Fatalf("a file beyond the batch limit: pieces %q, want %q", got, only)
		}
		checkStats(t, ix)
	}
	if n := logs.FilterMessage("a file has more pieces than one batch of the index holds; it is left out").Len(); n != 1 {
		t.Fatalf("%d WARNs for the file beyond the limit, want 1: %v", n, logs.All())
	}
	writeFile(t, root, note, "apple 0\napple 1\n")
	items := search(t, ix, allEvidence("apple"))
	if len(items) != 3 {
		t.Fatalf("after the file shrank: %d items, want 3: %q", len(items), texts(items))
	}
	checkStats(t, ix)
}
