package retriever

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
)

// Confinement tests of issue 8: nothing outside the run folder is ever read
// (spec §1). Each places a file with a word found nowhere in the run outside
// it, and asserts that the word is never found and that the engine's own
// count of the bytes it read is that of the run's files.

const secretWord = "zebrasecret"

// outsideRun makes a folder beside the run that looks like a run itself, each
// of its files holding secretWord, and returns it.
func outsideRun(t *testing.T) string {
	t.Helper()
	return writeRun(t, map[string]string{
		"secret.txt":            secretWord + " plain\n",
		"episode-1/a/notes.txt": secretWord + " note\n",
		"episode-1/a/a.log":     rec("c1", secretWord+" record") + secretWord + " unfielded\n",
	})
}

// assertNoSecret searches the index in every way a client can for the secret
// word and fails if anything is found.
func assertNoSecret(t *testing.T, ix *Index) {
	t.Helper()
	reqs := []Request{
		{Query: secretWord, TopK: MaxTopK},
		{Query: secretWord, TopK: MaxTopK, Episode: "episode-1", Conversation: "c1"},
		{Query: secretWord, TopK: MaxTopK, Episode: "episode-9", Conversation: "c1"},
		{Query: secretWord, TopK: MaxTopK, Agent: "a", Episode: "episode-9", Conversation: "c1"},
		{TurnMessage: secretWord + " plain note record", TopK: MaxTopK, Episode: "episode-2", Conversation: "-"},
	}
	for _, req := range reqs {
		res, err := ix.Search(context.Background(), req)
		if err != nil {
			t.Fatalf("search %+v: %v", req, err)
		}
		for _, it := range res.Items {
			if strings.Contains(it.Text, secretWord) || !strings.HasPrefix(it.Path, ix.Root()+string(filepath.Separator)) {
				t.Errorf("search %+v found %q in %s", req, it.Text, it.Path)
			}
		}
	}
	res, err := ix.Symbols(context.Background(), secretWord, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range res.Items {
		t.Errorf("symbols found %q in %s", it.Text, it.Path)
	}
	known := len(ix.state.Dict.Lookup([]string{secretWord})) > 0
	if known {
		t.Errorf("%q is a term of the index", secretWord)
	}
}

// runBytes is the size of the run's agent files: regular files below
// episode-N/<agent>/, links not followed.
func runBytes(t *testing.T, root string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if d.Type().IsRegular() && len(parts) >= 3 {
			if _, ok := EpisodeNumber(parts[0]); ok {
				info, err := d.Info()
				if err != nil {
					return err
				}
				n += info.Size()
			}
		}
		return nil
	})
	must(t, err)
	return n
}

// TestConfineLinks: links to files and folders outside the run, at every
// level (agent file, folder below an agent, agent folder, episode folder), by
// absolute and relative paths, through /proc and through an open file
// descriptor, are never followed, each WARNed once; links inside are skipped
// without a WARN. Only the run's own files are read.
func TestConfineLinks(t *testing.T) {
	noLeaks(t)
	out := outsideRun(t)
	root := writeRun(t, map[string]string{
		"episode-1/a/own.txt":  "apple own\n",
		"episode-1/b/real.txt": "apple real\n",
		"episode-1/a/own.log":  rec("c1", "apple record"),
	})
	held, err := os.Open(filepath.Join(out, "secret.txt"))
	must(t, err)
	defer held.Close()
	rel, err := filepath.Rel(filepath.Join(root, "episode-1/a"), filepath.Join(out, "secret.txt"))
	must(t, err)
	outside := map[string]string{ // link -> target, all outside the run
		"episode-1/a/file-out.txt":    filepath.Join(out, "secret.txt"),
		"episode-1/a/file-rel.txt":    rel,
		"episode-1/a/file-dotdot.txt": root + "/../" + filepath.Base(out) + "/secret.txt",
		"episode-1/a/dir-out":         out,
		"episode-1/a/log-out.log":     filepath.Join(out, "episode-1/a/a.log"),
		"episode-1/c":                 filepath.Join(out, "episode-1/a"),
		"episode-2":                   filepath.Join(out, "episode-1"),
		"episode-1/a/proc-root":       "/proc/self/root",
		"episode-1/a/proc-cwd":        "/proc/self/cwd",
		"episode-1/a/proc-environ":    "/proc/self/environ",
		"episode-1/a/proc-fd.txt":     fmt.Sprintf("/proc/self/fd/%d", held.Fd()),
		"episode-1/a/proc-out.txt":    "/proc/self/root" + filepath.Join(out, "secret.txt"),
	}
	inside := map[string]string{
		"episode-1/a/file-in.txt": "../b/real.txt",
		"episode-1/a/dir-in":      "../b",
		"episode-1/a/run":         root,
		"episode-3":               "episode-1",
	}
	for _, links := range []map[string]string{outside, inside} {
		for link, target := range links {
			must(t, os.Symlink(target, filepath.Join(root, link)))
		}
	}
	log, logs := observed()
	ix := openTest(t, Options{Root: root, Logger: log})
	for range 3 {
		assertNoSecret(t, ix)
		got := sortedTexts(search(t, ix, Request{Query: "apple", TopK: 100, Episode: "episode-9", Conversation: "c1"}))
		if want := []string{"2026-10-21 18:00:00 [running] [c1] apple record", "apple own", "apple real"}; !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	content, _ := ix.BytesRead()
	if want := runBytes(t, root); content != want {
		t.Errorf("read %d content bytes, the run's files hold %d", content, want)
	}
	var warned []string
	for _, e := range logs.All() {
		// own.log's history line in a log file is unfielded: its WARN names a file, not a link.
		if _, link := e.ContextMap()["link"]; e.Level != zap.WarnLevel || !link {
			continue
		}
		warned = append(warned, fmt.Sprint(e.ContextMap()["link"]))
	}
	slices.Sort(warned)
	var want []string
	for link := range outside {
		if link != "episode-1/a/proc-fd.txt" || warnsFd(held) {
			want = append(want, link)
		}
	}
	slices.Sort(want)
	if !slices.Equal(warned, want) {
		t.Errorf("WARNs for links:\n got %q\nwant %q (one per link outside)", warned, want)
	}
}

// warnsFd: /proc/self/fd/N resolves to the file's path, outside the run.
func warnsFd(f *os.File) bool {
	_, err := filepath.EvalSymlinks(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	return err == nil
}

// TestConfineAgentNames: an agent name that could reach outside its episode
// is rejected with an error naming the field and the value, before anything
// is read.
func TestConfineAgentNames(t *testing.T) {
	noLeaks(t)
	out := outsideRun(t)
	root := writeRun(t, map[string]string{"episode-1/a/own.txt": "apple own\n"})
	ix := openTest(t, Options{Root: root})
	for _, agent := range []string{
		"..", ".", "../a", "../../" + filepath.Base(out), "/", out, "a/..", `..\a`, `a\b`, "a/b",
		"episode-1/a", "a\x00", "./a",
	} {
		_, err := ix.Search(context.Background(), Request{Query: secretWord + " apple", Agent: agent})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "agent" || fe.Value != agent || !strings.Contains(err.Error(), "agent") {
			t.Errorf("agent %q: %v", agent, err)
		}
	}
	if content, checks := ix.BytesRead(); content != 0 || checks != 0 {
		t.Errorf("rejected requests read %d bytes", content+checks)
	}
	// Names that are only odd are agent names, of agents the run does not have.
	for _, agent := range []string{"...", "a..", " ", "-", filepath.Base(out)} {
		if items := search(t, ix, Request{Query: "apple " + secretWord, Agent: agent}); len(items) != 0 {
			t.Errorf("agent %q: %d items", agent, len(items))
		}
	}
	assertNoSecret(t, ix)
}

// TestConfineURIs: a URI or path given by a client names a file only when it
// lies in the run, by its path; Diagnostics answers from the index and reads
// no file, so a path outside the root, with "..", or through /proc gets none.
func TestConfineURIs(t *testing.T) {
	noLeaks(t)
	out := outsideRun(t)
	root := writeRun(t, map[string]string{
		"episode-1/a/a.log": "apple unfielded\n",
	})
	ix := openTest(t, Options{Root: root})
	search(t, ix, Request{Query: "apple"})
	inside := filepath.Join(root, "episode-1/a/a.log")
	if d := ix.Diagnostics(inside, 0); len(d) != 1 {
		t.Fatalf("the run's record file: %d diagnostics, want 1", len(d))
	}
	read, checks := ix.BytesRead()
	outLog := filepath.Join(out, "episode-1/a/a.log")
	for _, tc := range []struct {
		path string
		want int
	}{
		{outLog, 0},
		{root + "/../" + filepath.Base(out) + "/episode-1/a/a.log", 0},
		{root + "/episode-1/../../" + filepath.Base(out) + "/episode-1/a/a.log", 0},
		{"/proc/self/root" + outLog, 0},
		{"/proc/self/root" + inside, 0}, // not the root's path: not the run's
		{"/proc/self/cwd/../../" + outLog, 0},
		{"episode-1/a/a.log", 0}, // relative: no file of the run
		{"../" + filepath.Base(out) + "/episode-1/a/a.log", 0},
		{"/etc/passwd", 0},
		{"", 0},
		{root, 0},
		{root + "/episode-1/b/../a/a.log", 1}, // inside once cleaned
	} {
		if d := ix.Diagnostics(tc.path, 0); len(d) != tc.want {
			t.Errorf("Diagnostics(%q): %d, want %d", tc.path, len(d), tc.want)
		}
		if p := PathOfURI(FileURI(tc.path)); tc.path != "" && filepath.IsAbs(tc.path) && p != tc.path {
			t.Errorf("PathOfURI(FileURI(%q)) = %q", tc.path, p)
		}
	}
	if r, c := ix.BytesRead(); r != read || c != checks {
		t.Errorf("Diagnostics read %d bytes", r-read+c-checks)
	}
	for _, tc := range []struct{ uri, want string }{
		{FileURI(inside), inside},
		{"file:///etc/passwd", "/etc/passwd"},
		{"file:///a/%2E%2E/b", "/a/../b"},
		{"file://host/etc/passwd", "/etc/passwd"},
		{"http://x/etc/passwd", ""},
		{"untitled:Untitled-1", ""},
		{"/etc/passwd", ""},
		{"file:%zz", ""},
	} {
		p := PathOfURI(tc.uri)
		if p != tc.want {
			t.Errorf("PathOfURI(%q) = %q, want %q", tc.uri, p, tc.want)
		}
		if d := ix.Diagnostics(p, 0); len(d) != 0 && p != inside {
			t.Errorf("Diagnostics of %q: %v", tc.uri, d)
		}
	}
	assertNoSecret(t, ix)
}

// TestConfineRootReplaced: the run folder replaced by a link to another
// folder after Open: the index keeps reading the folder it opened (through
// os.Root), never the link's target; a search of a run folder deleted fails,
// naming it.
func TestConfineRootReplaced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove bool // the old folder is deleted, not moved aside
	}{{"moved", false}, {"deleted", true}} {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			out := outsideRun(t)
			parent := t.TempDir()
			root := filepath.Join(parent, "run")
			writeFile(t, root, "episode-1/a/notes.txt", "apple one\n")
			log, logs := observed()
			ix := openTest(t, Options{Root: root, Logger: log})
			search(t, ix, Request{Query: "apple"})
			before, _ := ix.BytesRead()
			if tc.remove {
				must(t, os.RemoveAll(root))
			} else {
				must(t, os.Rename(root, root+".old"))
			}
			must(t, os.Symlink(out, root))
			if !tc.remove {
				appendFile(t, root+".old", "episode-1/a/notes.txt", "apple two\n")
			}
			if tc.remove {
				// The folder it opened is gone: a search fails, naming it.
				for range 2 {
					_, err := ix.Search(context.Background(), Request{Query: secretWord + " apple"})
					if err == nil || !strings.Contains(err.Error(), "run folder") {
						t.Errorf("search of a deleted run folder: %v", err)
					}
				}
				known := len(ix.state.Dict.Lookup([]string{secretWord})) > 0
				if known {
					t.Errorf("%q is a term of the index", secretWord)
				}
			} else {
				for range 2 {
					assertNoSecret(t, ix)
				}
				// The index reads the folder it opened, moved away.
				got := sortedTexts(search(t, ix, Request{Query: "apple", TopK: 10}))
				if want := []string{"apple one", "apple two"}; !slices.Equal(got, want) {
					t.Errorf("got %q, want %q", got, want)
				}
			}
			after, _ := ix.BytesRead()
			if wantRead := int64(len("apple two\n")); !tc.remove && after-before != wantRead {
				t.Errorf("read %d bytes after the swap, want %d", after-before, wantRead)
			} else if tc.remove && after != before {
				t.Errorf("read %d bytes after the run folder was deleted", after-before)
			}
			if ix.Root() != root {
				t.Errorf("root %q", ix.Root())
			}
			for _, e := range logs.All() {
				if strings.Contains(fmt.Sprint(e.ContextMap()), out) {
					t.Errorf("logged the outside folder: %v", e)
				}
			}
		})
	}
}

// TestConfineIsRunFolderAfterSwap: whether the root is a run folder is told
// by the folder the index opened, not by what its path names since.
func TestConfineIsRunFolderAfterSwap(t *testing.T) {
	out := outsideRun(t) // holds an episode folder
	parent := t.TempDir()
	root := filepath.Join(parent, "run")
	writeFile(t, root, note, "apple one\n")
	ix := openTest(t, Options{Root: root})
	if !ix.IsRunFolder() {
		t.Fatal("a run folder is not one")
	}
	must(t, os.Rename(root, root+".old"))
	must(t, os.Symlink(out, root))
	must(t, os.RemoveAll(filepath.Join(root+".old", "episode-1")))
	if ix.IsRunFolder() {
		t.Error("the opened folder, now without episodes, is a run folder: the path's new target was listed")
	}
}

// TestConfineFileReplacedByLink: a file replaced by a link after its folder
// was listed (and before it is read) is not read through the link: neither
// to a file outside the run, nor to a file of the run that is no agent's, nor
// through /proc.
func TestConfineFileReplacedByLink(t *testing.T) {
	out := outsideRun(t)
	for _, tc := range []struct{ name, target string }{
		{"outside", filepath.Join(out, "secret.txt")},
		{"outside relative", "RELATIVE"},
		{"proc", "/proc/self/root" + filepath.Join(out, "secret.txt")},
		{"run file of no agent", "../../readme.txt"},
		{"other episode's folder file", "../../other/secret.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			root := writeRun(t, map[string]string{
				"readme.txt":          secretWord + " readme of no agent\n",
				"other/secret.txt":    secretWord + " in a folder of no episode\n",
				note:                  "apple one\n",
				"episode-1/a/own.txt": "apple own\n",
			})
			log, logs := observed()
			ix := openTest(t, Options{Root: root, Logger: log})
			search(t, ix, Request{Query: "apple"})
			appendFile(t, root, note, "apple two\n")
			var once sync.Once
			ix.fw.beforeRead = func(rel string) {
				if rel == note {
					once.Do(func() {
						p := filepath.Join(root, note)
						target := tc.target
						if target == "RELATIVE" {
							r, err := filepath.Rel(filepath.Dir(p), filepath.Join(out, "secret.txt"))
							must(t, err)
							target = r
						}
						must(t, os.Remove(p))
						must(t, os.Symlink(target, p))
					})
				}
			}
			res, err := ix.Search(context.Background(), Request{Query: secretWord + " apple", TopK: 10})
			if err != nil {
				t.Fatal(err)
			}
			ix.fw.beforeRead = nil
			for _, it := range res.Items {
				if strings.Contains(it.Text, secretWord) {
					t.Errorf("read through a link: %q as %s", it.Text, it.File)
				}
			}
			assertNoSecret(t, ix)
			if got := texts(search(t, ix, Request{Query: "apple", TopK: 10})); !slices.Equal(got, []string{"apple own"}) {
				t.Errorf("after: %q", got)
			}
			// A link out of the run is WARNed once (by the read that os.Root
			// refused, or by the next walk), one inside not at all.
			var warned []string
			for _, e := range logs.FilterLevelExact(zap.WarnLevel).All() {
				warned = append(warned, e.Message+" "+fmt.Sprint(e.ContextMap()["link"]))
			}
			want := []string{"skipped a link that points outside the run folder " + note}
			if strings.HasPrefix(tc.name, "run") || strings.HasPrefix(tc.name, "other") {
				want = nil
			}
			if !slices.Equal(warned, want) {
				t.Errorf("WARNs: %q, want %q", warned, want)
			}
			for _, e := range logs.All() {
				if strings.Contains(fmt.Sprint(e.ContextMap()), secretWord) {
					t.Errorf("logged the secret: %v", e)
				}
			}
		})
	}
}

// TestConfineProcRoots: a run folder named through /proc is taken by its real
// path; /proc itself, holding no episode-N folder, is no run and nothing of it
// is read.
func TestConfineProcRoots(t *testing.T) {
	noLeaks(t)
	root := writeRun(t, map[string]string{note: "apple one\n"})
	ix := openTest(t, Options{Root: "/proc/self/root" + root})
	if ix.Root() != root {
		t.Errorf("root %q, want %q", ix.Root(), root)
	}
	if got := texts(search(t, ix, Request{Query: "apple"})); !slices.Equal(got, []string{"apple one"}) {
		t.Errorf("got %q", got)
	}
	for _, p := range []string{"/proc", "/proc/self", "/proc/self/fd", "/sys"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		ix := openTest(t, Options{Root: p})
		if ix.IsRunFolder() {
			t.Errorf("%s is a run folder", p)
		}
		if items := search(t, ix, Request{Query: "apple self pid root"}); len(items) != 0 {
			t.Errorf("%s: %d items", p, len(items))
		}
		if content, checks := ix.BytesRead(); content+checks != 0 {
			t.Errorf("%s: read %d bytes", p, content+checks)
		}
	}
}

// TestConfineFolderSwappedForLink: an agent folder and an episode folder
// swapped for links to folders of the run that are no agent's, again and
// again while searches run: no search reads through the links. (A race:
// each round has a chance of a listing and a read on either side of a swap.)
func TestConfineFolderSwappedForLink(t *testing.T) {
	noLeaks(t)
	rounds := 300
	if testing.Short() {
		rounds = 100
	}
	files := map[string]string{
		"other/a/notes.txt":  secretWord + " under a folder of no episode\n",
		"other/notes.txt":    secretWord + " in a folder of no episode\n",
		"episode-1/b/b.txt":  "apple bee\n",
		"episode-2/a/x.txt":  "apple two\n",
		"episode-2/c/y.txt":  "apple sea\n",
		"episode-2/a/z.txt":  "apple zed\n",
		"episode-1/b/bb.txt": "apple bee bee\n",
	}
	for i := range 20 {
		files[fmt.Sprintf("episode-1/a/notes%d.txt", i)] = fmt.Sprintf("apple one %d\n", i)
		files[fmt.Sprintf("other/a/notes%d.txt", i)] = fmt.Sprintf("%s other %d\n", secretWord, i)
		files[fmt.Sprintf("other/notes%d.txt", i)] = fmt.Sprintf("%s other %d\n", secretWord, i)
	}
	root := writeRun(t, files)
	ix := openTest(t, Options{Root: root})
	search(t, ix, Request{Query: "apple"})
	swap := []struct{ path, aside, target string }{
		{"episode-1/a", "aside-a", "../other"},
		{"episode-2", "aside-2", "other"},
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s := swap[i%len(swap)]
			p := filepath.Join(root, s.path)
			if err := os.Rename(p, filepath.Join(root, s.aside)); err != nil {
				t.Error(err)
				return
			}
			os.Symlink(s.target, p)
			for range 200 { // hold the link a while
				if _, err := os.Lstat(p); err != nil {
					break
				}
			}
			os.Remove(p)
			if err := os.Rename(filepath.Join(root, s.aside), p); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range rounds {
		// A search that lists a folder between the swaps also appends, so
		// that files are read and not only stat'd.
		appendFile(t, root, "episode-1/b/b.txt", "apple bee more\n")
		res, err := ix.Search(context.Background(), Request{Query: secretWord + " apple", TopK: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range res.Items {
			if strings.Contains(it.Text, secretWord) {
				t.Errorf("read through a link: %q as %s", it.Text, it.File)
			}
		}
	}
	close(stop)
	<-done
	known := len(ix.state.Dict.Lookup([]string{secretWord})) > 0
	if known {
		t.Errorf("%q is a term of the index", secretWord)
	}
	got := len(search(t, ix, Request{Query: "apple", TopK: MaxTopK}))
	if want := 20 + 4; got < want {
		t.Errorf("after the swaps: %d items, want at least %d", got, want)
	}
}
