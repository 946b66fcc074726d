package retriever

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runls/masking"
)

func TestReadLines(t *testing.T) {
	var long strings.Builder
	for i := range 40 {
		fmt.Fprintf(&long, "line %d of the notes\n", i+1)
	}
	root := writeRun(t, map[string]string{
		"episode-1/alice/alice.log": "2026-10-21 18:00:00 INFO  [running] [conv-1] Alice first\r\n" +
			"  continued\n2026-10-21 18:00:01 INFO  [running] [conv-1] Alice last without end",
		"episode-1/alice/notes/long.txt": long.String(),
		"episode-1/bob/wide.txt":         strings.Repeat("é", 30) + "\nshort\n",
		"episode-1/bob/bad.txt":          "caf\xe9 ok\n",
		"episode-1/summary.txt":          "no agent\n",
		"run-notes.txt":                  "no agent\n",
		"episode-1/carol/bin.dat":        "a\x00b\n",
	})
	ix := openTest(t, Options{Root: root})
	ctx := context.Background()

	tests := []struct {
		name       string
		req        ReadRequest
		want       []string
		eof, stop  bool
		cut        []int // line numbers cut
		errField   string
		errReasons string
	}{
		{name: "record file whole", req: ReadRequest{Path: "episode-1/alice/alice.log", First: 1, Count: 10},
			want: []string{"2026-10-21 18:00:00 INFO  [running] [conv-1] Alice first", "  continued", "2026-10-21 18:00:01 INFO  [running] [conv-1] Alice last without end"}, eof: true},
		{name: "middle, past the line index", req: ReadRequest{Path: "episode-1/alice/notes/long.txt", First: 17, Count: 3},
			want: []string{"line 17 of the notes", "line 18 of the notes", "line 19 of the notes"}},
		{name: "to the last line", req: ReadRequest{Path: "./episode-1/alice/notes/long.txt", First: 39, Count: 2},
			want: []string{"line 39 of the notes", "line 40 of the notes"}, eof: true},
		{name: "count beyond the end", req: ReadRequest{Path: "episode-1/alice/notes/long.txt", First: 40, Count: 5},
			want: []string{"line 40 of the notes"}, eof: true},
		{name: "cut on a character", req: ReadRequest{Path: "episode-1/bob/wide.txt", First: 1, Count: 2, MaxLineBytes: 9},
			want: []string{"éééé", "short"}, cut: []int{1}, eof: true},
		{name: "stopped by the byte bound", req: ReadRequest{Path: "episode-1/alice/notes/long.txt", First: 1, Count: 10, MaxBytes: 45},
			want: []string{"line 1 of the notes", "line 2 of the notes"}, stop: true},
		{name: "first line beyond the bound still given", req: ReadRequest{Path: "episode-1/alice/notes/long.txt", First: 1, Count: 3, MaxBytes: 5},
			want: []string{"line 1 of the notes"}, stop: true},
		{name: "invalid bytes", req: ReadRequest{Path: "episode-1/bob/bad.txt", First: 1, Count: 1},
			want: []string{"caf\uFFFD ok"}, eof: true},

		{name: "beyond the end", req: ReadRequest{Path: "episode-1/alice/notes/long.txt", First: 41, Count: 1}, errField: "startLine", errReasons: "has 40 lines"},
		{name: "line 0", req: ReadRequest{Path: "episode-1/alice/alice.log", First: 0, Count: 1}, errField: "startLine"},
		{name: "no count", req: ReadRequest{Path: "episode-1/alice/alice.log", First: 2, Count: 0}, errField: "endLine"},
		{name: "empty path", req: ReadRequest{First: 1, Count: 1}, errField: "path"},
		{name: "dot dot", req: ReadRequest{Path: "episode-1/alice/../bob/wide.txt", First: 1, Count: 1}, errField: "path", errReasons: `".."`},
		{name: "out through dot dot", req: ReadRequest{Path: "../../etc/passwd", First: 1, Count: 1}, errField: "path", errReasons: `".."`},
		{name: "absolute", req: ReadRequest{Path: "/etc/passwd", First: 1, Count: 1}, errField: "path", errReasons: "absolute"},
		{name: "proc", req: ReadRequest{Path: "/proc/self/environ", First: 1, Count: 1}, errField: "path", errReasons: "absolute"},
		{name: "windows absolute", req: ReadRequest{Path: `C:\x`, First: 1, Count: 1}, errField: "path", errReasons: "absolute"},
		{name: "backslash", req: ReadRequest{Path: `episode-1\alice\alice.log`, First: 1, Count: 1}, errField: "path"},
		{name: "nul", req: ReadRequest{Path: "episode-1/alice/alice.log\x00", First: 1, Count: 1}, errField: "path"},
		{name: "missing", req: ReadRequest{Path: "episode-1/alice/nothing.log", First: 1, Count: 1}, errField: "path", errReasons: "no such file"},
		{name: "folder", req: ReadRequest{Path: "episode-1/alice", First: 1, Count: 1}, errField: "path", errReasons: "folder"},
		{name: "episode file", req: ReadRequest{Path: "episode-1/summary.txt", First: 1, Count: 1}, errField: "path", errReasons: "not an agent file"},
		{name: "run file", req: ReadRequest{Path: "run-notes.txt", First: 1, Count: 1}, errField: "path", errReasons: "not an agent file"},
		{name: "binary", req: ReadRequest{Path: "episode-1/carol/bin.dat", First: 1, Count: 1}, errField: "path", errReasons: "binary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ix.ReadLines(ctx, tt.req)
			if tt.errField != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Field != tt.errField || !strings.Contains(fe.Reason, tt.errReasons) {
					t.Fatalf("error %v, want a field error on %s saying %q", err, tt.errField, tt.errReasons)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			var cut []int
			for i, l := range got.Lines {
				if l.Number != tt.req.First+i {
					t.Errorf("line %d numbered %d", tt.req.First+i, l.Number)
				}
				texts = append(texts, l.Text)
				if l.Cut {
					cut = append(cut, l.Number)
				}
			}
			if fmt.Sprint(texts) != fmt.Sprint(tt.want) || fmt.Sprint(cut) != fmt.Sprint(tt.cut) {
				t.Errorf("lines %q cut %v, want %q cut %v", texts, cut, tt.want, tt.cut)
			}
			if got.EOF != tt.eof || got.Stopped != tt.stop {
				t.Errorf("EOF %v stopped %v, want %v %v", got.EOF, got.Stopped, tt.eof, tt.stop)
			}
		})
	}
}

// TestReadLinesConfined: a link in the run (to a file outside, to a file
// inside, a folder link on the way) is refused, and so is a file swapped for
// a link after it was indexed; the secret outside is never in an answer.
func TestReadLinesConfined(t *testing.T) {
	outside := filepath.Join(outsideRun(t), "secret.txt")
	root := writeRun(t, map[string]string{
		"episode-1/alice/notes.txt": "inside\n",
		"episode-1/alice/swap.txt":  "will become a link\n",
	})
	for name, target := range map[string]string{
		"episode-1/alice/out.txt":   outside,
		"episode-1/alice/in.txt":    filepath.Join(root, "episode-1/alice/notes.txt"),
		"episode-1/alice/up":        filepath.Dir(outside),
		"episode-1/alice/sideways":  filepath.Join(root, "episode-1/alice"),
		"episode-1/bob":             filepath.Join(root, "episode-1/alice"),
		"episode-1/alice/procfile":  "/proc/self/environ",
		"episode-1/alice/procroot/": "/proc/self/root",
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(name, "/")))); err != nil {
			t.Fatal(err)
		}
	}
	ix := openTest(t, Options{Root: root})
	ctx := context.Background()
	if _, err := ix.Refresh(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Swapped for a link to the outside file after indexing.
	swap := filepath.Join(root, "episode-1/alice/swap.txt")
	if err := os.Remove(swap); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, swap); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"episode-1/alice/out.txt", "episode-1/alice/in.txt", "episode-1/alice/up/" + filepath.Base(outside),
		"episode-1/alice/sideways/notes.txt", "episode-1/bob/notes.txt", "episode-1/alice/swap.txt",
		"episode-1/alice/procfile", "episode-1/alice/procroot/etc/passwd",
	} {
		got, err := ix.ReadLines(ctx, ReadRequest{Path: p, First: 1, Count: 5})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "path" {
			t.Errorf("%s: %+v, %v; want a field error on path", p, got, err)
		}
		if strings.Contains(fmt.Sprint(got, err), secretWord) {
			t.Errorf("%s: the answer holds the outside file's text", p)
		}
	}
	if got, err := ix.ReadLines(ctx, ReadRequest{Path: "episode-1/alice/notes.txt", First: 1, Count: 1}); err != nil || len(got.Lines) != 1 {
		t.Errorf("the file inside: %+v, %v", got, err)
	}
}

// TestReadLinesMasked: with masking on, a key block that starts before the
// lines asked for is hidden in them too, a cut never splits a placeholder,
// and no part of a secret that crosses the cut is shown.
func TestReadLinesMasked(t *testing.T) {
	const key = "-----BEGIN RSA PRIVATE KEY-----\n" +
		"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n" +
		"VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n" +
		"-----END RSA PRIVATE KEY-----\n"
	root := writeRun(t, map[string]string{
		"episode-1/alice/key.txt":   "before\n" + key + "after /home/jane/secret.txt\n",
		"episode-1/alice/alice.log": "2026-10-21 18:00:00 INFO  [running] [conv-1] Alice token " + strings.Repeat("x", 10) + " AKIAABCDEFGHIJKLMNOP end\n",
	})
	ix := openTest(t, Options{Root: root, Masker: masking.HidingOutside(root)})
	ctx := context.Background()
	got, err := ix.ReadLines(ctx, ReadRequest{Path: "episode-1/alice/key.txt", First: 3, Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	all := fmt.Sprint(got.Lines)
	for _, s := range []string{"MIIE", "VTLw", "/home/jane"} {
		if strings.Contains(all, s) {
			t.Errorf("masked lines hold %q: %s", s, all)
		}
	}
	if !strings.Contains(all, "after "+masking.PathPlaceholder) {
		t.Errorf("masked lines lack the path placeholder: %s", all)
	}
	line := "2026-10-21 18:00:00 INFO  [running] [conv-1] Alice token xxxxxxxxxx "
	for cutAt := len(line) - 2; cutAt < len(line)+25; cutAt++ {
		got, err := ix.ReadLines(ctx, ReadRequest{Path: "episode-1/alice/alice.log", First: 1, Count: 1, MaxLineBytes: cutAt})
		if err != nil {
			t.Fatal(err)
		}
		text := got.Lines[0].Text
		if strings.Contains(text, "AKIA") || strings.Contains(text, "<sec") && !strings.Contains(text, masking.SecretPlaceholder) {
			t.Errorf("cut at %d: %q", cutAt, text)
		}
	}
}

func TestReadLineCapped(t *testing.T) {
	for _, tt := range []struct {
		in    string
		limit int
		want  []string
		long  []bool
	}{
		{"a\nbb\r\n\nlast", 0, []string{"a", "bb", "", "last"}, []bool{false, false, false, false}},
		{"abc\r\nabcd\r\nab\n", 3, []string{"abc", "abc", "ab"}, []bool{false, true, false}},
		{"\r\n", 1, []string{""}, []bool{false}},
		{strings.Repeat("y", 100) + "\r\n", 10, []string{strings.Repeat("y", 10)}, []bool{true}},
	} {
		r := bufio.NewReaderSize(strings.NewReader(tt.in), 16)
		var got []string
		var long []bool
		for {
			l, lg, err := readLineCapped(r, tt.limit)
			if err != nil && len(l) == 0 {
				break
			}
			got, long = append(got, string(l)), append(long, lg)
		}
		if fmt.Sprint(got, long) != fmt.Sprint(tt.want, tt.long) {
			t.Errorf("%q limit %d: %q %v, want %q %v", tt.in, tt.limit, got, long, tt.want, tt.long)
		}
	}
}
