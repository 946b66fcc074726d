package retriever

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayoutDecidedAgainAsTheFileGrows: a record file read first when it
// held one line, then grown, answers as a fresh index of it does (spec §2:
// the layout is decided from its first lines, the run's own forms win;
// §15): a foreign-looking first line followed by the run's records, and a
// line of neither kind followed by a foreign log's, are read again from
// their start; a foreign log that stays one and the run's own log are
// read on from where they stopped (the content bytes read are the appended
// ones), both by a running index and by one reopened from its entry after
// the append.
func TestLayoutDecidedAgainAsTheFileGrows(t *testing.T) {
	// Python logging's default asctime pattern: no line of it is one of the
	// run's records.
	python := func(i int) string {
		return "2026-10-21 18:00:0" + string(rune('0'+i%10)) + ",123 - app - INFO - step " + string(rune('a'+i%26)) + "\n"
	}
	var foreign strings.Builder
	for i := range 12 {
		foreign.WriteString(python(i))
	}
	own := "2026-10-21 18:01:02.310 ERROR [running] [conv-1] Bob migration failed\n2026-10-21 18:01:03 INFO  [running] [conv-1] Bob retried\n"
	for _, tt := range []struct {
		name        string
		first, rest string
		again       bool // read again from its start
	}{
		{"a foreign-looking line, then the run's records",
			"18:00:10.050 INFO  [running] [-] Bob chat started\n", own, true},
		{"a line of neither kind, then a foreign log's",
			"starting up\n", foreign.String(), true},
		{"empty lines, a foreign log's line, then the run's records",
			strings.Repeat("\n", 100) + python(0), own, true},
		{"a foreign log that stays one", python(0), foreign.String(), false},
		{"the run's own log", "2026-10-21 18:00:00 INFO  [running] [conv-1] Bob began\n", own, false},
	} {
		for _, reopen := range []bool{false, true} {
			name := tt.name
			if reopen {
				name += ", reopened"
			}
			t.Run(name, func(t *testing.T) {
				rel := "episode-1/bob/bob.log"
				run := writeRun(t, map[string]string{rel: tt.first, "episode-1/bob/notes.txt": "a note\n"})
				opts := Options{Root: run}
				root := cacheRoot(t)
				ix, _ := reopened(t, opts, root)
				if reopen {
					must(t, ix.Close())
				}
				f, err := os.OpenFile(filepath.Join(run, filepath.FromSlash(rel)), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteString(tt.rest); err != nil {
					t.Fatal(err)
				}
				f.Close()
				if reopen {
					var restored bool
					if ix, restored = reopened(t, opts, root); !restored {
						t.Fatal("not restored")
					}
				}
				before, _ := ix.BytesRead()
				if _, err := ix.Refresh(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
				if !reopen {
					after, _ := ix.BytesRead()
					want := int64(len(tt.rest))
					if tt.again {
						want += int64(len(tt.first))
					}
					if got := after - before; got != want {
						t.Errorf("read %d content bytes after the append, want %d (read again from its start: %v)", got, want, tt.again)
					}
				}
				assertSameAnswers(t, ix, opts)
			})
		}
	}
}
