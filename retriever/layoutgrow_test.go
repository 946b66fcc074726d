package retriever

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestLayoutDecidedAgainAsTheFileGrows: a record file read first when it
// held one line, then grown, reads as a fresh read of it does (spec §2: the
// layout is decided from its first lines, the run's own forms win): a
// foreign-looking first line followed by the run's records, and a line of
// neither kind followed by a foreign log's; and a foreign log that stays
// one keeps its layout. The diagnostics, folds and a search are compared.
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
	for _, tt := range []struct {
		name        string
		first, rest string
	}{
		{"a foreign-looking line, then the run's records",
			"18:00:10.050 INFO  [running] [-] Bob chat started\n",
			"2026-10-21 18:01:02.310 ERROR [running] [conv-1] Bob migration failed\n2026-10-21 18:01:03 INFO  [running] [conv-1] Bob retried\n"},
		{"a line of neither kind, then a foreign log's",
			"starting up\n", foreign.String()},
		{"a foreign log that stays one",
			python(0), foreign.String()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rel := "episode-1/bob/bob.log"
			root := writeRun(t, map[string]string{rel: tt.first})
			path := filepath.Join(root, filepath.FromSlash(rel))
			ix := openTest(t, Options{Root: root})
			ctx := context.Background()
			if _, err := ix.Refresh(ctx, nil); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(tt.rest); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if _, err := ix.Refresh(ctx, nil); err != nil {
				t.Fatal(err)
			}
			fresh := openTest(t, Options{Root: root})
			if _, err := fresh.Refresh(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if got, want := ix.Diagnostics(path, Uncapped), fresh.Diagnostics(path, Uncapped); !reflect.DeepEqual(got, want) {
				t.Errorf("diagnostics after the append\n%s\nwant a fresh read's\n%s", dump(got), dump(want))
			}
			if got, want := ix.Folds(path), fresh.Folds(path); !reflect.DeepEqual(got, want) {
				t.Errorf("folds after the append %+v, want a fresh read's %+v", got, want)
			}
			req := Request{Query: "migration retried step", Episode: "episode-2", Conversation: "conv-1", TopK: 20}
			got, err := ix.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Items, want.Items) {
				t.Errorf("search after the append %+v, want a fresh read's %+v", got.Items, want.Items)
			}
		})
	}
}
