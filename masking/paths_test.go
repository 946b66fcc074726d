package masking

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPathRedactor(t *testing.T) {
	p := &PathRedactor{roots: []string{"/runs/r1"}, home: "/home/alice"}
	for _, c := range []struct{ in, want string }{
		// absolute POSIX paths
		{"read /etc/passwd now", "read <path> now"},
		{"/home/bob/.ssh/id_rsa", "<path>"},
		{`open("/var/log/syslog")`, `open("<path>")`},
		{"cat /tmp/a.txt.", "cat <path>."},
		{"at /src/main.go:12:3: error", "at <path>:12:3: error"},
		{"PATH=/usr/bin:/home/bob/bin", "PATH=<path>:<path>"},
		{"2>/dev/null", "2><path>"},
		{"**/etc/hosts**", "**<path>**"},
		{"→/opt/x", "→<path>"},
		{`"C:\Users\bob"`, `"<path>"`},
		// inside the run folder: kept, on the cleaned path
		same("/runs/r1/episode-1/alice/notes.txt"),
		same("/runs/r1"),
		{"/runs/r1/../r2/x", "<path>"},
		{"/runs/r1/x/../../../etc", "<path>"},
		{"/runs/r10/x", "<path>"},
		// home paths
		{"~/notes.md and ~bob/x", "<path> and <path>"},
		same("~/../../runs/r1/x"),
		{"$HOME/.aws/credentials ${HOME}/y", "<path> <path>"},
		same("$HOME/../../runs/r1/z"),
		// Windows drive paths, forward or back slashes, JSON-escaped, with spaces
		{`C:\Users\bob\secret.txt`, "<path>"},
		{"D:/data/x.csv,", "<path>,"},
		{`"C:\\Users\\bob\\x"`, `"<path>"`},
		{`ran C:\Program Files (x86)\My Tool\tool.exe ok`, "ran <path> ok"},
		{`(C:\x\y)`, `(<path>)`},
		{`\\server\share\x`, "<path>"},
		// file URIs
		{"file:///home/bob/x.txt", "<path>"},
		{"see file://fileserver/share/x.", "see <path>."},
		{"file:///C:/Users/bob/x", "<path>"},
		same("file:///runs/r1/episode-1/a.txt"),
		same("file://localhost/runs/r1/a%20b.txt"),
		{"file:///runs/r1/../r2", "<path>"},
		// not paths
		same("https://example.com/a/b/c"),
		same("<p>see <code>hf_xxxxx</code> and </span ></x:Row>"),
		{"<a></etc/passwd", "<a><<path>"},
		same("docs/a/b.md ./x ../y a/b"),
		same("24/7 and/or 1/2 km/h"),
		same("// a comment"),
		same("a / b"),
		same("http://[::1]/x"),
		same("C: drive"),
		same("~ alone"),
		same(PathPlaceholder),
	} {
		if got := maskString(p, c.in); got != c.want {
			t.Errorf("mask(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestPathRedactorRealPath checks a run folder given through a link: paths by
// its real path and by the link are both inside.
func TestPathRedactorRealPath(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	p := NewPathRedactor(link)
	realPath, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{link + "/episode-1/a.txt", realPath + "/episode-1/a.txt"} {
		if got := maskString(p, in); got != in {
			t.Errorf("mask(%q) = %q, want it kept", in, got)
		}
	}
	if got := maskString(p, dir+"/other"); got != PathPlaceholder {
		t.Errorf("mask(%q) = %q, want %q", dir+"/other", got, PathPlaceholder)
	}
}

// TestPathRedactorRelativeRun checks that a relative run folder is made absolute.
func TestPathRedactorRelativeRun(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	p := NewPathRedactor("testdata")
	in := filepath.ToSlash(filepath.Join(wd, "testdata", "x.txt"))
	if got := maskString(p, in); got != in {
		t.Errorf("mask(%q) = %q, want it kept", in, got)
	}
}

func TestPathRedactorHome(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		t.Skip("no home folder")
	}
	p := NewPathRedactor(filepath.Join(home, "runs", "r1"))
	for _, c := range []struct{ in, want string }{
		{"~/runs/r1/episode-1/x", "~/runs/r1/episode-1/x"},
		{"~/runs/r2/x", PathPlaceholder},
		{"$HOME/runs/r1/x", "$HOME/runs/r1/x"},
	} {
		if got := maskString(p, c.in); got != c.want {
			t.Errorf("mask(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
