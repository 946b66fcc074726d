package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"runls/internal/rungen"
	"runls/lsp"
	"runls/retriever"
)

// soakConfig bounds a soak run.
type soakConfig struct {
	size      int64         // bytes of the generated run
	duration  time.Duration // total time of the load
	requests  int           // at most this many requests
	phase     time.Duration // load between two comparisons with a fresh index
	workers   int           // clients' requests in flight at once
	goroutine int           // allowed growth of the goroutine count over the run
}

// TestSoakShort is the soak of issue 8 in ~10 s: it runs by default.
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	soak(t, soakConfig{size: 1 << 20, duration: 8 * time.Second, requests: 4000, phase: 2 * time.Second, workers: 3, goroutine: 40})
}

// TestSoak is the long soak (bench/soak.sh): RUNLS_SOAK=1, with
// RUNLS_SOAK_DURATION (default 2m), RUNLS_SOAK_REQUESTS (default 20000) and
// RUNLS_SOAK_SIZE (default 8MB).
func TestSoak(t *testing.T) {
	if os.Getenv("RUNLS_SOAK") != "1" {
		t.Skip("the long soak runs with RUNLS_SOAK=1 (bench/soak.sh)")
	}
	cfg := soakConfig{size: 8 << 20, duration: 2 * time.Minute, requests: 20000, phase: 10 * time.Second, workers: 4, goroutine: 40}
	if v := os.Getenv("RUNLS_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("RUNLS_SOAK_DURATION: %v", err)
		}
		cfg.duration = d
	}
	if v := os.Getenv("RUNLS_SOAK_REQUESTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("RUNLS_SOAK_REQUESTS: %v", err)
		}
		cfg.requests = n
	}
	if v := os.Getenv("RUNLS_SOAK_SIZE"); v != "" {
		n, err := rungen.ParseSize(v)
		if err != nil {
			t.Fatalf("RUNLS_SOAK_SIZE: %v", err)
		}
		cfg.size = n
	}
	soak(t, cfg)
}

// soak starts the server on a generated run, appends to the run's files from
// another goroutine, and sends a mix of run/search, workspace/symbol and
// $/cancelRequest (numeric ids) in phases. After each phase it stops the
// appends, lets every answer arrive, and compares the server's answers with
// a freshly opened Index. No reply may be an error, except -32800 for a
// request that was cancelled; the goroutine count may not grow beyond
// cfg.goroutine during the phases, and must come back within
// soakGoroutineSlack of the count after indexing at the end; the heap in use
// at the end may not pass soakHeapBound. With RUNLS_SOAK_BINARY=path the
// server is that runls binary in a process of its own (its memory is printed
// from /proc; the goroutine and heap figures are then the client's, and the
// heap bound is not checked).
func soak(t *testing.T, cfg soakConfig) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	genOpts := rungen.Options{Bytes: cfg.size, Seed: 8, Episodes: 4, Agents: 3, Workers: 1, VocabularySize: 5000}
	root := filepath.Join(t.TempDir(), "run")
	if _, err := rungen.Generate(ctx, root, genOpts); err != nil {
		t.Fatal(err)
	}
	files := agentFiles(t, root)

	core, logs := observer.New(zapcore.WarnLevel)
	served := make(chan error, 1)
	var conn io.ReadWriteCloser
	serverLog, serverPID := "", 0
	if bin := os.Getenv("RUNLS_SOAK_BINARY"); bin != "" {
		// The built runls serve, in a process of its own: the appends come
		// from another process, and its memory is read from /proc.
		serverLog = filepath.Join(t.TempDir(), "serve.log")
		cmd := exec.Command(bin, "serve", "--log-file", serverLog, "--log-level", "warn")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		serverPID = cmd.Process.Pid
		go func() { served <- cmd.Wait() }()
		conn = processConn{stdout, stdin}
	} else {
		a, b := net.Pipe()
		go func() { served <- lsp.Serve(ctx, a, lsp.Options{Logger: zap.New(core), Version: "soak"}) }()
		conn = b
	}
	sc := newSoakClient(t, conn)
	defer func() {
		_ = conn.Close()
		select {
		case <-served:
		case <-time.After(waitTimeout):
			t.Errorf("Serve did not return after the connection closed")
		}
		sc.wait()
	}()
	if r := sc.call(protocol.MethodInitialize, map[string]any{"processId": nil, "rootUri": retriever.FileURI(root), "capabilities": map[string]any{}}); r.Error != nil {
		t.Fatalf("initialize: %v", r.Error)
	}
	sc.notify(protocol.MethodInitialized, map[string]any{})
	// The baselines after indexing: a search waits only the answer grace, so
	// run/info is asked until it says the index done (a run of CI's size
	// indexes in seconds; a long soak's in minutes).
	waitInfoDone(t, 10*time.Minute, func() retriever.Info {
		r := sc.call(lsp.MethodRunInfo, map[string]any{})
		var info retriever.Info
		if r.Error != nil || json.Unmarshal(r.Result, &info) != nil {
			t.Fatalf("run/info: %v", r.Error)
		}
		return info
	})

	queries := rungen.Queries(genOpts, 60)
	base := runtime.NumGoroutine()
	heap0 := heapInUse()
	t.Logf("run: %d files, %d bytes; goroutines after indexing: %d; heap after indexing: %.1f MiB", len(files), cfg.size, base, mib(heap0))

	app := &appender{a: rungen.NewAppender(genOpts), files: files, root: root, r: rand.New(rand.NewPCG(1, 2))}
	var st soakStats
	start := time.Now()
	maxGoroutines, maxHeap := base, heap0
	var heap1 uint64 // after the first phase
	var run1 int64   // the run's bytes then
	for phase := 1; time.Since(start) < cfg.duration && int(st.sent.Load()) < cfg.requests; phase++ {
		stopApp := app.run()
		load(t, sc, cfg, &st, queries, start, phase)
		appended, err := stopApp()
		if err != nil {
			t.Fatal(err)
		}

		// Everything is answered and nothing is being written: the server
		// must now answer as a fresh index of the same files does.
		ref, err := retriever.Open(ctx, retriever.Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		compared, items := compareWithIndex(t, sc, ref, queries, phase)
		if err := ref.Close(); err != nil {
			t.Fatal(err)
		}
		if serverPID != 0 {
			t.Logf("phase %d: runls serve (pid %d): %s", phase, serverPID, procMemory(serverPID))
		}
		g, h := runtime.NumGoroutine(), heapInUse()
		maxGoroutines, maxHeap = max(maxGoroutines, g), max(maxHeap, h)
		if phase == 1 {
			heap1, run1 = h, runBytes(t, root)
		}
		t.Logf("phase %d at %s: %d requests (%d cancelled, %d answered -32800), %d appends (%d bytes), %d answers (%d items) equal to a fresh index's; goroutines %d, heap %.1f MiB",
			phase, time.Since(start).Round(time.Millisecond), st.sent.Load(), st.cancels.Load(), st.cancelled.Load(),
			appended.appends, appended.bytes, compared, items, g, mib(h))
		if g > base+cfg.goroutine {
			t.Errorf("phase %d: %d goroutines, more than %d after indexing + %d", phase, g, base, cfg.goroutine)
		}
		if t.Failed() {
			break
		}
	}
	elapsed := time.Since(start)
	t.Logf("SOAK: %d requests in %s (%.0f/s): %d run/search, %d workspace/symbol, %d cancelled (%d answered -32800); bad replies %d",
		st.sent.Load(), elapsed.Round(time.Millisecond), float64(st.sent.Load())/elapsed.Seconds(),
		st.searches.Load(), st.symbols.Load(), st.cancels.Load(), st.cancelled.Load(), st.bad.Load())
	// Every answer is in: the requests' goroutines end.
	endGoroutines := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); endGoroutines > base+soakGoroutineSlack && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		endGoroutines = runtime.NumGoroutine()
	}
	heapEnd, runEnd := heapInUse(), runBytes(t, root)
	t.Logf("SOAK: goroutines after indexing %d, at most %d (bound +%d), at the end %d (bound +%d); heap in use after GC: %.1f MiB after indexing, %.1f MiB after phase 1, %.1f MiB at most, %.1f MiB at the end; run grew to %d bytes",
		base, maxGoroutines, cfg.goroutine, endGoroutines, soakGoroutineSlack, mib(heap0), mib(heap1), mib(maxHeap), mib(heapEnd), runEnd)
	if endGoroutines > base+soakGoroutineSlack {
		t.Errorf("%d goroutines at the end, more than %d after indexing + %d", endGoroutines, base, soakGoroutineSlack)
	}
	if serverPID == 0 && heap1 > 0 {
		bound := soakHeapBound(heap1, runEnd-run1)
		t.Logf("SOAK: heap bound: %.1f MiB at the end, at most %.1f MiB (%.1f x %.1f MiB after phase 1 + %d MiB + %.1f B per byte appended since, %d bytes)",
			mib(heapEnd), mib(bound), soakHeapFactor, mib(heap1), soakHeapSlack>>20, soakHeapPerAppendedByte, runEnd-run1)
		if heapEnd > bound {
			t.Errorf("heap in use %.1f MiB at the end, more than the bound %.1f MiB: memory grows with the load", mib(heapEnd), mib(bound))
		}
	}
	warns := map[string]int{}
	for _, e := range logs.All() {
		if e.Level >= zapcore.ErrorLevel {
			t.Errorf("logged %s: %s %v", e.Level, e.Message, e.ContextMap())
		}
		warns[e.Message]++
	}
	if serverLog != "" {
		b, err := os.ReadFile(serverLog)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if strings.Contains(line, "\tERROR\t") {
				t.Errorf("runls serve logged an error: %s", line)
			}
			if _, rest, ok := strings.Cut(line, "\tWARN\t"); ok {
				msg, _, _ := strings.Cut(rest, "\t{") // logger name and message, without the fields
				warns[strings.ReplaceAll(msg, "\t", ": ")]++
			}
		}
		t.Logf("SOAK: runls serve (pid %d) at the end: %s", serverPID, procMemory(serverPID))
	}
	t.Logf("SOAK: log entries at WARN and above: %v", warns)

	if r := sc.call(protocol.MethodShutdown, nil); r.Error != nil {
		t.Errorf("shutdown: %v", r.Error)
	}
	sc.notify(protocol.MethodExit, nil)
	select {
	case err := <-served:
		served <- err
		if err != nil {
			t.Errorf("Serve = %v", err)
		}
	case <-time.After(waitTimeout):
		t.Errorf("Serve did not return after exit")
	}
}

type soakStats struct {
	sent, searches, symbols, cancels, cancelled, bad atomic.Int64
}

// load sends requests from cfg.workers goroutines for one phase, and returns
// when every one of them is answered.
func load(t *testing.T, sc *soakClient, cfg soakConfig, st *soakStats, queries []string, start time.Time, phase int) {
	phaseEnd := time.Now().Add(cfg.phase)
	var wg sync.WaitGroup
	for w := range cfg.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(phase), uint64(w)))
			for time.Now().Before(phaseEnd) && time.Since(start) < cfg.duration {
				if st.sent.Add(1) > int64(cfg.requests) {
					st.sent.Add(-1)
					return
				}
				method, params := soakRequest(r, queries)
				if method == lsp.MethodRunSearch {
					st.searches.Add(1)
				} else {
					st.symbols.Add(1)
				}
				cancel := r.IntN(5) == 0
				id, ch := sc.send(method, params)
				if cancel {
					st.cancels.Add(1)
					if r.IntN(2) == 0 {
						time.Sleep(time.Duration(r.IntN(2000)) * time.Microsecond)
					}
					sc.notify(protocol.MethodCancelRequest, map[string]any{"id": id})
				}
				var rep soakReply
				select {
				case rep = <-ch:
				case <-time.After(waitTimeout):
					st.bad.Add(1)
					t.Errorf("request %d (%s %s) got no answer", id, method, mustJSON(params))
					return
				}
				switch {
				case rep.Error == nil:
				case cancel && rep.Error.Code == int64(protocol.CodeRequestCancelled):
					st.cancelled.Add(1)
				default:
					st.bad.Add(1)
					t.Errorf("request %d (%s %s, cancelled: %v) answered %v", id, method, mustJSON(params), cancel, rep.Error)
				}
			}
		}()
	}
	wg.Wait()
}

// soakRequest is a valid request: run/search with random fields, or
// workspace/symbol.
func soakRequest(r *rand.Rand, queries []string) (string, map[string]any) {
	q := queries[r.IntN(len(queries))]
	if r.IntN(4) == 0 {
		return protocol.MethodWorkspaceSymbol, map[string]any{"query": q}
	}
	p := map[string]any{"query": q, "topK": 1 + r.IntN(50)}
	if r.IntN(3) > 0 {
		p["episode"] = fmt.Sprintf("episode-%d", 1+r.IntN(4))
		p["conversation"] = fmt.Sprintf("conv-%d", 1+r.IntN(12))
	}
	if r.IntN(4) == 0 {
		p["agent"] = rungen.AgentNames(3)[r.IntN(3)]
	}
	if r.IntN(5) == 0 {
		p["scope"] = "episode"
	}
	return lsp.MethodRunSearch, p
}

// compareWithIndex asks the server and ref the same requests and reports
// every difference. It returns how many answers it compared, and how many
// items they held (an empty answer equal to an empty one proves little).
func compareWithIndex(t *testing.T, sc *soakClient, ref *retriever.Index, queries []string, phase int) (answers, items int) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(uint64(phase), 99))
	for i := 0; i < 12; i++ {
		method, params := soakRequest(r, queries)
		rep := sc.call(method, params)
		if rep.Error != nil {
			t.Errorf("phase %d: %s %s: %v", phase, method, mustJSON(params), rep.Error)
			continue
		}
		answers++
		if method == protocol.MethodWorkspaceSymbol {
			var got []protocol.SymbolInformation
			if err := json.Unmarshal(rep.Result, &got); err != nil {
				t.Fatal(err)
			}
			want, err := ref.Symbols(ctx, params["query"].(string), 0)
			if err != nil {
				t.Fatal(err)
			}
			items += len(got)
			if g, w := symbolLocations(got), itemLocations(want.Items); g != w {
				t.Errorf("phase %d: workspace/symbol %q differs from a fresh index:\n got %s\nwant %s", phase, params["query"], g, w)
			}
			continue
		}
		var got retriever.Result
		if err := json.Unmarshal(rep.Result, &got); err != nil {
			t.Fatal(err)
		}
		var req retriever.Request
		if err := json.Unmarshal([]byte(mustJSON(params)), &req); err != nil {
			t.Fatal(err)
		}
		want, err := ref.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		items += len(got.Items)
		if g, w := canonical(t, got), canonical(t, want); g != w {
			t.Errorf("phase %d: run/search %s differs from a fresh index:\n got %s\nwant %s", phase, mustJSON(params), g, w)
		}
	}
	return answers, items
}

func symbolLocations(syms []protocol.SymbolInformation) string {
	var b strings.Builder
	for _, s := range syms {
		r := s.Location.Range
		fmt.Fprintf(&b, "%s:%d:%d-%d\n", s.Location.URI, r.Start.Line, r.Start.Character, r.End.Character)
	}
	return b.String()
}

func itemLocations(items []retriever.Item) string {
	var b strings.Builder
	for _, it := range items {
		r := it.Location.Range
		fmt.Fprintf(&b, "%s:%d:%d-%d\n", it.Location.URI, r.Start.Line, r.Start.Character, r.End.Character)
	}
	return b.String()
}

// appender appends records to the run's files (and now and then a new note
// file) until stopped.
type appender struct {
	a     *rungen.Appender
	files []string
	root  string
	r     *rand.Rand
	made  int
}

type appended struct {
	appends int
	bytes   int64
}

// run starts appending; the func it returns stops, waits, and says what was written.
func (ap *appender) run() func() (appended, error) {
	stop := make(chan struct{})
	done := make(chan appended, 1)
	var errs []error
	go func() {
		var got appended
		defer func() { done <- got }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(1+ap.r.IntN(5)) * time.Millisecond):
			}
			path := ap.files[ap.r.IntN(len(ap.files))]
			if ap.r.IntN(200) == 0 {
				ap.made++
				path = filepath.Join(ap.root, fmt.Sprintf("episode-%d", 1+ap.r.IntN(4)), rungen.AgentNames(3)[ap.r.IntN(3)], fmt.Sprintf("soak-%d.txt", ap.made))
				ap.files = append(ap.files, path)
			}
			n, err := ap.a.Append(path, 1+ap.r.IntN(4))
			if err != nil {
				errs = append(errs, err)
				return
			}
			got.appends++
			got.bytes += n
		}
	}()
	return func() (appended, error) {
		close(stop)
		got := <-done
		if len(errs) > 0 {
			return got, fmt.Errorf("appending: %w", errs[0])
		}
		return got, nil
	}
}

// agentFiles lists the files of the run's agent folders.
func agentFiles(t *testing.T, root string) []string {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if !d.IsDir() && strings.Count(rel, string(filepath.Separator)) >= 2 && strings.HasPrefix(rel, "episode-") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatal("the generated run has no agent files")
	}
	return out
}

func runBytes(t *testing.T, root string) int64 {
	var n int64
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// procMemory is a process's resident and peak memory and its threads, from /proc.
func procMemory(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	var out []string
	for line := range strings.SplitSeq(string(b), "\n") {
		for _, k := range []string{"VmRSS:", "VmHWM:", "Threads:"} {
			if v, ok := strings.CutPrefix(line, k); ok {
				out = append(out, k+" "+strings.Join(strings.Fields(v), " "))
			}
		}
	}
	return strings.Join(out, ", ")
}

// processConn is a server process's stdout and stdin.
type processConn struct {
	io.ReadCloser
	in io.WriteCloser
}

func (c processConn) Write(p []byte) (int, error) { return c.in.Write(p) }
func (c processConn) Close() error                { return c.in.Close() }

// The soak's memory bound: after the last phase, with every answer in and
// after GC, the heap in use may be at most soakHeapFactor times what it was
// after the first phase (the warm-up: the index built, segments merged once,
// caches filled), plus soakHeapSlack, plus soakHeapPerAppendedByte for each
// byte appended to the run since (the index keeps ~0.5 B per byte read; twice
// that is allowed). Anything that grows with the requests (20,000 in the long
// soak) rather than with the run passes it soon: 1 KiB kept per request is
// 20 MB. The goroutines must come back within soakGoroutineSlack of their
// count after indexing.
const (
	soakHeapFactor          = 1.5
	soakHeapSlack           = 8 << 20
	soakHeapPerAppendedByte = 1.0
	soakGoroutineSlack      = 2
)

func soakHeapBound(heap1 uint64, appended int64) uint64 {
	return uint64(soakHeapFactor*float64(heap1)) + soakHeapSlack + uint64(soakHeapPerAppendedByte*float64(max(appended, 0)))
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// soakClient is a JSON-RPC client with numeric ids of its own, so that it can
// cancel a request by its id, as VS Code and Neovim do.
type soakClient struct {
	t      *testing.T
	conn   io.ReadWriter
	wmu    sync.Mutex
	nextID atomic.Int64
	done   chan struct{}

	mu      sync.Mutex
	pending map[int64]chan soakReply
}

type soakReply struct {
	Result json.RawMessage
	Error  *soakError
}

type soakError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *soakError) String() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

func newSoakClient(t *testing.T, conn io.ReadWriter) *soakClient {
	sc := &soakClient{t: t, conn: conn, done: make(chan struct{}), pending: map[int64]chan soakReply{}}
	go sc.read()
	return sc
}

func (sc *soakClient) wait() { <-sc.done }

func (sc *soakClient) write(msg map[string]any) {
	body, err := json.Marshal(msg)
	if err != nil {
		panic(err)
	}
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	_, _ = fmt.Fprintf(sc.conn, "Content-Length: %d\r\n\r\n%s", len(body), body)
}

// send sends a request and returns its id and where its reply will come.
func (sc *soakClient) send(method string, params any) (int64, chan soakReply) {
	id := sc.nextID.Add(1)
	ch := make(chan soakReply, 1)
	sc.mu.Lock()
	sc.pending[id] = ch
	sc.mu.Unlock()
	sc.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return id, ch
}

func (sc *soakClient) call(method string, params any) soakReply {
	sc.t.Helper()
	id, ch := sc.send(method, params)
	select {
	case r := <-ch:
		return r
	case <-time.After(waitTimeout):
		sc.t.Fatalf("request %d (%s) got no answer", id, method)
		return soakReply{}
	}
}

func (sc *soakClient) notify(method string, params any) {
	sc.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// read dispatches replies by id and answers the server's own requests.
func (sc *soakClient) read() {
	defer close(sc.done)
	in := bufio.NewReader(sc.conn)
	for {
		body, err := lsp.ReadFrame(in)
		if err != nil {
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *soakError      `json:"error"`
		}
		if err := json.Unmarshal(body, &msg); err != nil {
			sc.t.Errorf("the server sent %q: %v", body, err)
			continue
		}
		if msg.Method != "" {
			if len(msg.ID) > 0 {
				sc.wmu.Lock()
				reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":null}`, msg.ID)
				_, _ = fmt.Fprintf(sc.conn, "Content-Length: %d\r\n\r\n%s", len(reply), reply)
				sc.wmu.Unlock()
			}
			continue
		}
		id, err := strconv.ParseInt(string(msg.ID), 10, 64)
		if err != nil {
			sc.t.Errorf("a reply with id %s", msg.ID)
			continue
		}
		sc.mu.Lock()
		ch := sc.pending[id]
		delete(sc.pending, id)
		sc.mu.Unlock()
		if ch == nil {
			sc.t.Errorf("a reply to %d, which was not asked or was answered already", id)
			continue
		}
		ch <- soakReply{Result: msg.Result, Error: msg.Error}
	}
}
