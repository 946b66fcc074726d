package retriever

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"runls/internal/rungen"
)

// Hardening tests of issue 8: many files, a huge file, special files, links
// that loop, files and folders that change while they are read. Each checks
// that no goroutine is left behind and that what is logged is logged once.
// RUNLS_HARDEN_BIG=1 runs the big versions (100,000 files, a 2 GB file);
// bench/faults.sh runs them.

func hardenBig() bool { return os.Getenv("RUNLS_HARDEN_BIG") != "" }

// noLeaks fails the test if it leaves a goroutine behind.
func noLeaks(t *testing.T) {
	t.Helper()
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) })
}

// observed returns a logger at INFO and above, and what it logged.
func observed() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zap.InfoLevel)
	return zap.New(core), logs
}

// searchWithin runs a search that must answer within d: a search that blocks
// (on a FIFO, say) fails the test instead of hanging it; unblock is then
// called so that the blocked goroutine can end.
func searchWithin(t *testing.T, ix *Index, req Request, d time.Duration, unblock func()) []Item {
	t.Helper()
	type answer struct {
		res Result
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		res, err := ix.Search(context.Background(), req)
		ch <- answer{res, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			t.Fatalf("search %+v: %v", req, a.err)
		}
		return a.res.Items
	case <-time.After(d):
		if unblock != nil {
			unblock()
		}
		<-ch
		t.Fatalf("search %+v blocked for %v", req, d)
		return nil
	}
}

// TestHardenManyFiles: a run of 10,000 small files (100,000 in the big
// version) over many agents and folders is indexed whole, each file's words
// are found, and a second search reads nothing again.
func TestHardenManyFiles(t *testing.T) {
	noLeaks(t)
	n := 10000
	if hardenBig() {
		n = 100000
	}
	root := t.TempDir()
	const agents, perDir = 50, 100
	made := map[string]bool{}
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("episode-%d", 1+i%3), fmt.Sprintf("agent%d", i%agents), fmt.Sprintf("d%d", i/(agents*perDir)))
		if !made[dir] {
			must(t, os.MkdirAll(dir, 0o755))
			made[dir] = true
		}
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), fmt.Appendf(nil, "common word%d\n", i), 0o644))
	}
	log, logs := observed()
	ix := openTest(t, Options{Root: root, Logger: log})
	start := time.Now()
	items := search(t, ix, Request{Query: "common", TopK: MaxTopK})
	first := time.Since(start)
	if len(items) != MaxTopK {
		t.Fatalf("%d items for a word of every file, want %d", len(items), MaxTopK)
	}
	info, err := ix.Info(context.Background())
	must(t, err)
	if info.Indexing.Files != n || len(info.Agents) != agents {
		t.Fatalf("info: %d files, %d agents; want %d, %d", info.Indexing.Files, len(info.Agents), n, agents)
	}
	read, _ := ix.BytesRead()
	start = time.Now()
	for _, i := range []int{0, n / 2, n - 1} {
		got := texts(search(t, ix, Request{Query: fmt.Sprintf("word%d", i)}))
		if want := fmt.Sprintf("common word%d", i); !slices.Equal(got, []string{want}) {
			t.Errorf("word%d: got %q", i, got)
		}
	}
	t.Logf("%d files: the first search (indexing) %v; a search of the unchanged run %v", n, first.Round(time.Millisecond), (time.Since(start) / 3).Round(time.Millisecond))
	if again, _ := ix.BytesRead(); again != read {
		t.Errorf("searches of an unchanged run read %d content bytes", again-read)
	}
	if logs.Len() != 0 {
		t.Errorf("logged %v", logs.All())
	}
}

// TestHardenLargeFile: a single file of 2 GB (RUNLS_HARDEN_BIG; or
// RUNLS_HARDEN_FILE=200MB for another size) is indexed with the heap far below
// the file's size: it is read in blocks, never whole. It reports the peak heap.
func TestHardenLargeFile(t *testing.T) {
	var size int64
	switch {
	case os.Getenv("RUNLS_HARDEN_FILE") != "":
		var err error
		size, err = rungen.ParseSize(os.Getenv("RUNLS_HARDEN_FILE"))
		must(t, err)
	case hardenBig():
		size = 2 << 30
	default:
		t.Skip("set RUNLS_HARDEN_BIG=1 (2 GB) or RUNLS_HARDEN_FILE=200MB")
	}
	noLeaks(t)
	root := t.TempDir()
	dir := filepath.Join(root, "episode-1", "a")
	must(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, "huge.txt")
	f, err := os.Create(path)
	must(t, err)
	// Long lines of few distinct words: the index stays small, so the heap
	// measures the reading, not the postings.
	line := strings.Repeat("alpha beta gamma delta epsilon ", 60) + "\n"
	chunk := []byte(strings.Repeat(line, (4<<20)/len(line)))
	var written int64
	for written < size {
		n, err := f.Write(chunk[:min(int64(len(chunk)), size-written)])
		must(t, err)
		written += int64(n)
	}
	_, err = f.WriteString("\nneedle at the end\n")
	must(t, err)
	must(t, f.Close())

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	}()
	ix := openTest(t, Options{Root: root})
	start := time.Now()
	got := texts(search(t, ix, Request{Query: "needle"}))
	elapsed := time.Since(start)
	close(stop)
	<-sampled
	if !slices.Equal(got, []string{"needle at the end"}) {
		t.Fatalf("got %q", got)
	}
	content, _ := ix.BytesRead()
	if content != written+int64(len("\nneedle at the end\n")) {
		t.Errorf("read %d bytes of %d", content, written)
	}
	fp := ix.Footprint()
	extra := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("file %d MB indexed in %v; peak heap in use %d MB above the start (%d MB at the start); %d pieces",
		written>>20, elapsed.Round(time.Millisecond), extra>>20, base.HeapInuse>>20, fp.Pieces)
	// The index of this file is about 40 bytes a piece (a piece per 2000
	// characters); reading adds the workers' 1 MiB blocks and a builder's
	// 32 MiB flush threshold. A bound of size/8 plus 256 MB fails if the file
	// is read whole.
	if limit := written/8 + 256<<20; extra > limit {
		t.Errorf("peak heap %d MB above the start, want at most %d MB", extra>>20, limit>>20)
	}
}

// TestHardenSpecialFiles: a FIFO, a device node and a socket in an agent
// folder are never opened (opening a FIFO for reading blocks until a writer
// comes); nor is a FIFO that replaced a file after the folder was listed, nor
// one that replaced a file whose pieces a result reads.
func TestHardenSpecialFiles(t *testing.T) {
	noLeaks(t)
	root := writeRun(t, map[string]string{note: "apple one\n", "episode-1/a/b.log": rec("c1", "apple said")})
	dir := filepath.Join(root, "episode-1/a")
	fifo := filepath.Join(dir, "pipe.txt")
	mkfifo(t, fifo)
	mkfifo(t, filepath.Join(dir, "pipe.log"))
	if err := mkCharDevice(filepath.Join(dir, "null.txt")); err != nil {
		t.Logf("no device node (%v): the FIFOs and the socket stand for it", err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock.txt"))
	if err == nil {
		defer l.Close()
	} else {
		t.Logf("no socket: %v", err)
	}
	// A writer that opens a FIFO lets a blocked reader go on.
	unblock := func(path string) func() {
		return func() {
			if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
	}
	log, logs := observed()
	ix := openTest(t, Options{Root: root, Logger: log})
	said := strings.TrimSuffix(rec("c1", "apple said"), "\n") // no interpreter: a record is a note
	want := []string{said, "apple one"}
	for range 2 {
		got := sortedTexts(searchWithin(t, ix, Request{Query: "apple", Episode: "episode-2", Conversation: "c1"}, 10*time.Second, unblock(fifo)))
		if !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if n := len(ix.RecordFiles()); n != 1 {
		t.Errorf("%d record files, want 1", n)
	}

	t.Run("replaced after listing", func(t *testing.T) {
		appendFile(t, root, note, "apple two\n")
		p := filepath.Join(root, note)
		var once sync.Once
		ix.fw.beforeRead = func(rel string) {
			if rel == note {
				once.Do(func() {
					must(t, os.Remove(p))
					mkfifo(t, p)
				})
			}
		}
		defer func() { ix.fw.beforeRead = nil }()
		got := sortedTexts(searchWithin(t, ix, Request{Query: "apple", Episode: "episode-2", Conversation: "c1"}, 10*time.Second, unblock(p)))
		if !slices.Equal(got, []string{said}) {
			t.Fatalf("got %q", got)
		}
		ix.fw.beforeRead = nil
		must(t, os.Remove(p))
		writeFile(t, root, note, "apple back\n")
		got = sortedTexts(searchWithin(t, ix, Request{Query: "apple", Episode: "episode-2", Conversation: "c1"}, 10*time.Second, nil))
		if !slices.Equal(got, []string{said, "apple back"}) {
			t.Fatalf("after the FIFO went: %q", got)
		}
	})

	t.Run("replaced before the result is read", func(t *testing.T) {
		p := filepath.Join(root, note)
		writeFile(t, root, note, "apple result\n")
		if got := texts(searchWithin(t, ix, Request{Query: "result"}, 10*time.Second, nil)); !slices.Equal(got, []string{"apple result"}) {
			t.Fatalf("before the FIFO: %q", got)
		}
		ix.handles.CloseAll()
		must(t, os.Remove(p))
		mkfifo(t, p)
		done := make(chan []Item, 1)
		go func() {
			res, _ := ix.searchIndexed(context.Background(), Request{Query: "apple", TopK: 10})
			done <- res.Items
		}()
		select {
		case items := <-done:
			if got := texts(items); slices.Contains(got, "apple result") {
				t.Errorf("a piece of a file now a FIFO was returned: %q", got)
			}
		case <-time.After(10 * time.Second):
			unblock(p)()
			<-done
			t.Fatal("making a result opened a FIFO and blocked")
		}
		must(t, os.Remove(p))
	})

	warns := logs.FilterLevelExact(zap.WarnLevel).All()
	if len(warns) != 0 {
		t.Errorf("special files warned: %v", warns)
	}
}

// TestHardenSymlinkLoops: links that loop (to each other, to themselves, to
// a parent folder) are skipped: the walk ends, nothing is found twice, and a
// link inside the run is not a WARN.
func TestHardenSymlinkLoops(t *testing.T) {
	noLeaks(t)
	root := writeRun(t, map[string]string{note: "apple one\n", "episode-1/a/sub/deep.txt": "apple deep\n"})
	a := filepath.Join(root, "episode-1/a")
	must(t, os.Symlink("loop2", filepath.Join(a, "loop1.txt")))
	must(t, os.Symlink("loop1.txt", filepath.Join(a, "loop2")))
	must(t, os.Symlink("self.log", filepath.Join(a, "self.log")))
	must(t, os.Symlink("..", filepath.Join(a, "sub/up")))
	must(t, os.Symlink(".", filepath.Join(a, "sub/here")))
	must(t, os.Symlink(root, filepath.Join(a, "run")))
	must(t, os.Symlink("../episode-1", filepath.Join(root, "episode-2")))
	log, logs := observed()
	ix := openTest(t, Options{Root: root, Logger: log})
	for range 2 {
		got := sortedTexts(searchWithin(t, ix, Request{Query: "apple", TopK: 100}, 20*time.Second, nil))
		if !slices.Equal(got, []string{"apple deep", "apple one"}) {
			t.Fatalf("got %q", got)
		}
	}
	if logs.Len() != 0 {
		t.Errorf("links inside the run logged %v", logs.All())
	}
}

// TestHardenDeleteRecreate: files deleted, recreated and replaced in a tight
// loop while searches run: no search fails, every piece returned is one the
// file held, and once the loop stops the index is the files'.
func TestHardenDeleteRecreate(t *testing.T) {
	noLeaks(t)
	iterations := 300
	if testing.Short() {
		iterations = 100
	}
	root := writeRun(t, map[string]string{"episode-1/a/keep.txt": "apple keep\n", note: "apple gen 0\n", hist: rec("c1", "apple rec 0")})
	log, logs := observed()
	ix := openTest(t, Options{Root: root, Logger: log})
	valid := func(text string) bool {
		if text == "apple keep" {
			return true
		}
		var n int
		_, err1 := fmt.Sscanf(text, "apple gen %d", &n)
		_, err2 := fmt.Sscanf(text, "apple rec %d", &n)
		return err1 == nil || err2 == nil
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var last atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		np, hp := filepath.Join(root, note), filepath.Join(root, hist)
		for i := 1; i <= iterations; i++ {
			select {
			case <-stop:
				return
			default:
			}
			switch i % 3 {
			case 0: // delete, then write anew
				os.Remove(np)
				os.WriteFile(np, fmt.Appendf(nil, "apple gen %d\n", i), 0o644)
			case 1: // replace by rename
				tmp := np + ".tmp"
				os.WriteFile(tmp, fmt.Appendf(nil, "apple gen %d\n", i), 0o644)
				os.Rename(tmp, np)
			case 2: // truncate and rewrite in place
				os.WriteFile(np, fmt.Appendf(nil, "apple gen %d\n", i), 0o644)
			}
			os.Remove(hp)
			os.WriteFile(hp, []byte(rec("c1", fmt.Sprintf("apple rec %d", i))), 0o644)
			last.Store(int64(i))
		}
	}()
	// The .tmp file of a rename is an agent file too: its pieces are valid.
	// Search until the loop is done, so that every change of it races a search.
	searches := 0
	for ; searches < iterations || last.Load() < int64(iterations); searches++ {
		for _, it := range searchWithin(t, ix, Request{Query: "apple", Episode: "episode-2", Conversation: "c1", TopK: 100}, 20*time.Second, nil) {
			if !valid(it.Text) {
				close(stop)
				wg.Wait()
				t.Fatalf("piece %q was never in the files", it.Text)
			}
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d changes of each file raced %d searches", iterations, searches)
	os.Remove(filepath.Join(root, note+".tmp"))
	i := last.Load()
	got := sortedTexts(search(t, ix, Request{Query: "apple", Episode: "episode-2", Conversation: "c1", TopK: 100}))
	want := []string{"apple keep", fmt.Sprintf("apple gen %d", i), fmt.Sprintf("apple rec %d", i)}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("after the loop: got %q, want %q", got, want)
	}
	if w := logs.FilterLevelExact(zap.WarnLevel).All(); len(w) != 0 {
		t.Errorf("deleting and recreating warned: %v", w)
	}
	seen := map[string]int{}
	for _, e := range logs.All() {
		seen[e.Message+fmt.Sprint(e.ContextMap()["file"])]++
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("logged %d times: %s", n, k)
		}
	}
}

// TestHardenFolderRenamed: an agent or episode folder renamed while its
// files are being read: the search answers without an error, and the next
// one finds the files under their new names and none under the old.
func TestHardenFolderRenamed(t *testing.T) {
	for _, tc := range []struct{ from, to string }{
		{"episode-1/a", "episode-1/b"},
		{"episode-1", "episode-7"},
		{"episode-1/a/sub", "episode-1/a/moved"},
	} {
		t.Run(tc.from, func(t *testing.T) {
			noLeaks(t)
			files := map[string]string{}
			for i := range 40 {
				files[fmt.Sprintf("episode-1/a/sub/f%02d.txt", i)] = fmt.Sprintf("apple file %d\n", i)
			}
			root := writeRun(t, files)
			log, logs := observed()
			ix := openTest(t, Options{Root: root, Logger: log})
			var once sync.Once
			ix.fw.beforeRead = func(rel string) {
				once.Do(func() { must(t, os.Rename(filepath.Join(root, tc.from), filepath.Join(root, tc.to))) })
			}
			res, err := ix.Search(context.Background(), Request{Query: "apple", TopK: 100})
			if err != nil {
				t.Fatalf("search while renamed: %v", err)
			}
			for _, it := range res.Items {
				if _, err := os.Stat(it.Path); err != nil && !strings.HasPrefix(it.File, tc.from+"/") {
					t.Errorf("item of a file that is not there: %s", it.File)
				}
			}
			ix.fw.beforeRead = nil
			items := search(t, ix, Request{Query: "apple", TopK: 100})
			if len(items) != 40 {
				t.Fatalf("after the rename: %d items, want 40", len(items))
			}
			for _, it := range items {
				if !strings.HasPrefix(it.File, tc.to+"/") {
					t.Errorf("item under the old name: %s", it.File)
				}
				if _, err := os.Stat(it.Path); err != nil {
					t.Errorf("item's path: %v", err)
				}
			}
			if w := logs.FilterLevelExact(zap.WarnLevel).All(); len(w) != 0 {
				t.Errorf("a rename warned: %v", w)
			}
		})
	}
}

// TestHardenUnreadableFile: a record file and a plain file whose permissions
// forbid reading are left out with one WARN each over many searches, and
// their diagnostics are empty. (TestUnreadableFile covers a folder and the
// file becoming readable again.) As root, it runs again as nobody.
func TestHardenUnreadableFile(t *testing.T) {
	if os.Getuid() == 0 {
		runAsNobody(t, "TestHardenUnreadableFile")
		return
	}
	noLeaks(t)
	root := writeRun(t, map[string]string{note: "apple one\n", hist: "apple unfielded\n", "episode-1/a/ok.txt": "apple ok\n"})
	must(t, os.Chmod(filepath.Join(root, note), 0))
	must(t, os.Chmod(filepath.Join(root, hist), 0o200))
	log, logs := observed()
	ix := openTest(t, Options{Root: root, Logger: log})
	for range 5 {
		if got := texts(search(t, ix, Request{Query: "apple", TopK: 10})); !slices.Equal(got, []string{"apple ok"}) {
			t.Fatalf("got %q", got)
		}
	}
	if d := ix.Diagnostics(filepath.Join(root, hist), 0); len(d) != 0 {
		t.Errorf("diagnostics of an unreadable file: %v", d)
	}
	warns := logs.FilterLevelExact(zap.WarnLevel).All()
	var files []string
	for _, w := range warns {
		files = append(files, fmt.Sprint(w.ContextMap()["file"]))
	}
	slices.Sort(files)
	if !slices.Equal(files, []string{hist, note}) {
		t.Fatalf("want one WARN per unreadable file, got %v", warns)
	}
}

// TestHardenQueryTerms: a query of 100,000 distinct terms is rejected with
// an error naming the query, through Search and Symbols; 100,000 copies of
// one term are one term, and answer.
func TestHardenQueryTerms(t *testing.T) {
	noLeaks(t)
	ix := openTest(t, Options{Root: writeRun(t, map[string]string{note: "apple one\n"})})
	huge := manyTerms(100000)
	for _, req := range []Request{{Query: huge}, {TurnMessage: huge}, {TurnMessage: huge, Query: "apple"}} {
		_, err := ix.Search(context.Background(), req)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "query" || !strings.Contains(err.Error(), "query") {
			t.Errorf("search of 100,000 terms: %v", err)
		}
	}
	if _, err := ix.Symbols(context.Background(), huge, 0); err == nil || !strings.Contains(err.Error(), "query") {
		t.Errorf("symbols of 100,000 terms: %v", err)
	}
	if got := texts(search(t, ix, Request{Query: strings.Repeat("apple ", 100000)})); !slices.Equal(got, []string{"apple one"}) {
		t.Errorf("one term repeated: %q", got)
	}
	if _, err := ix.Search(context.Background(), Request{Query: manyTerms(MaxQueryTerms)}); err != nil {
		t.Errorf("a query of MaxQueryTerms terms: %v", err)
	}
}

// TestHardenTopK1000: topK 1000 on a generated run answers 1000 pieces,
// best first. (Its time is BenchmarkTopK1000's.)
func TestHardenTopK1000(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	opts := rungen.Options{Bytes: 2 << 20, Seed: 3}
	if _, err := rungen.Generate(context.Background(), dir, opts); err != nil {
		t.Fatal(err)
	}
	ix := openTest(t, Options{Root: dir})
	q := rungen.Queries(opts, 1)[0]
	items := search(t, ix, Request{Query: q, TopK: MaxTopK})
	if len(items) == 0 {
		t.Fatalf("query %q found nothing", q)
	}
	for i := 1; i < len(items); i++ {
		if items[i].Score > items[i-1].Score {
			t.Fatalf("item %d scores %v above the one before (%v)", i, items[i].Score, items[i-1].Score)
		}
	}
	all := search(t, ix, Request{Query: "the a of to and is in it " + q, TopK: MaxTopK})
	if len(all) != MaxTopK {
		t.Errorf("a query of common words: %d items, want %d", len(all), MaxTopK)
	}
}

// BenchmarkTopK1000 times a search of topK 1000 on the shared generated run
// (RUNLS_BENCH_SIZE=1GB for the figure), beside the same searches of
// topK 5 for the ratio.
func BenchmarkTopK1000(b *testing.B) {
	ix, opts := indexedBenchRun(b)
	qs := rungen.Queries(opts, 16)
	for _, k := range []int{5, MaxTopK} {
		b.Run(fmt.Sprintf("topK=%d", k), func(b *testing.B) {
			i, items := 0, 0
			for b.Loop() {
				res, err := ix.Search(context.Background(), Request{Query: qs[i%len(qs)], Episode: "episode-3", Conversation: "conv-1", TopK: k})
				if err != nil {
					b.Fatal(err)
				}
				items += len(res.Items)
				i++
			}
			if items == 0 {
				b.Fatal("nothing found")
			}
			b.ReportMetric(float64(items)/float64(i), "items/op")
		})
	}
}

// TestHardenWatchFaults: with a watcher updating the index on its own, a FIFO
// appearing, a file swapped for a FIFO, link loops, files deleted and
// recreated in a loop and an agent folder renamed: the watcher's updates
// neither block nor fail (a search, which waits for a running update, answers
// in time), nothing is logged above INFO, and Watch leaves no goroutine behind.
func TestHardenWatchFaults(t *testing.T) {
	root := writeRun(t, map[string]string{note: "apple one\n", "episode-1/a/keep.txt": "apple keep\n"})
	log, logs := observed()
	ix := openTest(t, Options{Root: root, Logger: log})
	startWatch(t, ix)
	waitFor(t, "the first update", func() bool { return hasPiece(t, ix, note+":0:0 note apple one") })
	dir := filepath.Join(root, "episode-1/a")
	p := filepath.Join(root, note)
	unblock := func() {
		for _, f := range []string{p, filepath.Join(dir, "pipe.txt")} {
			if w, err := os.OpenFile(f, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
	}
	mkfifo(t, filepath.Join(dir, "pipe.txt"))
	must(t, os.Symlink("loop-b", filepath.Join(dir, "loop-a")))
	must(t, os.Symlink("loop-a", filepath.Join(dir, "loop-b")))
	must(t, os.Symlink("..", filepath.Join(dir, "up")))
	for i := range 50 {
		switch i % 3 {
		case 0:
			must(t, os.Remove(p))
			mkfifo(t, p)
		case 1:
			must(t, os.Remove(p))
			writeFile(t, root, note, fmt.Sprintf("apple gen %d\n", i))
		case 2:
			appendFile(t, root, note, fmt.Sprintf("apple more %d\n", i))
		}
		if i%10 == 0 {
			searchWithin(t, ix, Request{Query: "apple"}, 20*time.Second, unblock)
		}
	}
	must(t, os.Rename(dir, filepath.Join(root, "episode-1/b")))
	waitFor(t, "the renamed agent's files", func() bool { return hasPiece(t, ix, "episode-1/b/keep.txt:0:0 note apple keep") })
	got := sortedTexts(searchWithin(t, ix, Request{Query: "apple", TopK: 10}, 20*time.Second, unblock))
	if want := []string{"apple gen 49", "apple keep"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if w := logs.FilterLevelExact(zap.WarnLevel).All(); len(w) != 0 {
		t.Errorf("WARNs: %v", w)
	}
}
