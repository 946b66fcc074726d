package lsp_test

// What the server itself costs a request: run/search answered by an engine
// that does nothing, against the unknown method (which the reader answers
// inline), over OS pipes as an editor talks to `runls serve`. The client
// side allocates nothing a request, so the heap's count of allocations is
// the server's.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"runls/lsp"
	"runls/retriever"
)

// requestProbe is a served session on a fake engine whose search answers
// an empty result, and a client that frames requests into a reused buffer
// and reads their answers into another.
type requestProbe struct {
	p     pipeEnd
	in    *bufio.Reader
	frame []byte
	body  []byte
	id    int
}

func newRequestProbe(tb testing.TB) *requestProbe {
	return newRequestProbeOf(tb, retriever.Result{Items: []retriever.Item{}, Notices: []retriever.Notice{}})
}

// newRequestProbeOf is newRequestProbe on an engine whose searches answer res.
func newRequestProbeOf(tb testing.TB, res retriever.Result) *requestProbe {
	e := newFake()
	e.search = func(context.Context, retriever.Request) (retriever.Result, error) { return res, nil }
	a, p := osPipes(tb)
	done := make(chan error, 1)
	go func() {
		done <- lsp.Serve(context.Background(), a, lsp.Options{Logger: zap.NewNop(), Open: e.opener(nil, nil)})
	}()
	rp := &requestProbe{p: p, in: bufio.NewReaderSize(p, 1<<16)}
	tb.Cleanup(func() {
		rp.call("shutdown", "null")
		fmt.Fprintf(p, "Content-Length: 33\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}")
		<-done
		p.Close()
	})
	rp.call("initialize", `{"processId":null,"rootUri":"file:///fake/run","capabilities":{}}`)
	body := `{"jsonrpc":"2.0","method":"initialized","params":{}}`
	fmt.Fprintf(p, "Content-Length: %d\r\n\r\n%s", len(body), body)
	// The first search waits for the first index; the engine's is at once.
	rp.call("run/search", `{"query":"warm"}`)
	return rp
}

// call sends a request and reads frames up to its answer, which it
// returns (valid until the next call).
func (rp *requestProbe) call(method, params string) []byte {
	rp.id++
	const pre = `{"jsonrpc":"2.0","id":`
	n := len(pre) + len(strconv.Itoa(rp.id)) + len(`,"method":"`) + len(method) + len(`","params":`) + len(params) + 1
	f := append(rp.frame[:0], "Content-Length: "...)
	f = strconv.AppendInt(f, int64(n), 10)
	f = append(f, "\r\n\r\n"...)
	f = append(f, pre...)
	f = strconv.AppendInt(f, int64(rp.id), 10)
	f = append(f, `,"method":"`...)
	f = append(f, method...)
	f = append(f, `","params":`...)
	f = append(f, params...)
	f = append(f, '}')
	rp.frame = f
	if _, err := rp.p.Write(f); err != nil {
		panic(err)
	}
	for {
		body := rp.readFrame()
		if !bytes.Contains(body[:min(len(body), 64)], []byte(`"method"`)) {
			return body
		}
	}
}

// readFrame reads one framed message into rp.body.
func (rp *requestProbe) readFrame() []byte {
	length := -1
	for {
		line, err := rp.in.ReadSlice('\n')
		if err != nil {
			panic(err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			break
		}
		if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
			length = 0
			for _, c := range v {
				length = length*10 + int(c-'0')
			}
		}
	}
	if cap(rp.body) < length {
		rp.body = make([]byte, length)
	}
	rp.body = rp.body[:length]
	if _, err := io.ReadFull(rp.in, rp.body); err != nil {
		panic(err)
	}
	return rp.body
}

// allocsPerCall is the heap allocations of n calls, over n.
func (rp *requestProbe) allocsPerCall(n int, method, params string) float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		rp.call(method, params)
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n)
}

// BenchmarkRequestOverhead: run/search of an engine that does nothing
// against the unknown method, interleaved, with the allocations of each.
func BenchmarkRequestOverhead(b *testing.B) {
	rp := newRequestProbe(b)
	const search = `{"query":"leplikigro","episode":"episode-1","conversation":"conv-1","topK":5}`
	var trip, srch []time.Duration
	for range b.N {
		t0 := time.Now()
		rp.call("run/unknownMethod", "{}")
		t1 := time.Now()
		rp.call("run/search", search)
		trip, srch = append(trip, t1.Sub(t0)), append(srch, time.Since(t1))
	}
	b.StopTimer()
	b.ReportMetric(float64(median(trip).Nanoseconds())/1e3, "µs-unknown")
	b.ReportMetric(float64(median(srch).Nanoseconds())/1e3, "µs-search")
	b.ReportMetric(rp.allocsPerCall(2000, "run/unknownMethod", "{}"), "allocs-unknown")
	b.ReportMetric(rp.allocsPerCall(2000, "run/search", search), "allocs-search")
}

// TestRequestAllocations: what the server allocates to answer a request of
// the plain shape editors send, run/search answered by an engine that does
// nothing and the unknown method. Each message decoded by
// jsonrpc2.DecodeMessage took a 32 KiB buffer and 8 allocations more
// (decode.go), run/search's answer three buffers (its JSON, the frame, the
// queue's copy) and its entry in flight four allocations: 38 for the
// unknown method, 50 for run/search (36 KB), where they took 30 and 35.
// run/search's params decoded fast (SearchParams.decodeFast) take 4
// allocations fewer, and its answer made in the last one's buffer
// (stream.spare) some 1.1 KB less: 29 and 1.5 KB, where they took 33 and
// 2.6 KB. Answered on the reading goroutine (inline.go), run/search makes
// no worker's closure: 28 (its budget's timer is made once a server).
func TestRequestAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates for itself")
	}
	rp := newRequestProbe(t)
	const search = `{"query":"leplikigro","episode":"episode-1","conversation":"conv-1","topK":5}`
	for _, c := range []struct {
		method, params string
		most           float64
		mostBytes      uint64
	}{
		{"run/unknownMethod", "{}", 32, 16 << 10},
		{"run/search", search, 29, 2 << 10},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const n = 500
		for range n {
			rp.call(c.method, c.params)
		}
		runtime.ReadMemStats(&after)
		allocs := float64(after.Mallocs-before.Mallocs) / n
		bytes := (after.TotalAlloc - before.TotalAlloc) / n
		t.Logf("%s: %.1f allocations, %d bytes a request", c.method, allocs, bytes)
		if allocs > c.most || bytes > c.mostBytes {
			t.Errorf("%s: %.1f allocations and %d bytes a request, want at most %v and %d", c.method, allocs, bytes, c.most, c.mostBytes)
		}
	}
}

// TestRunSearchFrameBytes: run/search's answer as framed on the wire, byte
// for byte: its header's length, the envelope, and the result as
// encoding/json writes it (written into the frame's own buffer).
func TestRunSearchFrameBytes(t *testing.T) {
	conv, tm := "conv-1", "2026-12-07 10:00:00"
	for _, items := range []int{0, 1, 3, 40} {
		res := retriever.Result{Items: []retriever.Item{}, Notices: []retriever.Notice{}}
		for i := range items {
			res.Items = append(res.Items, retriever.Item{
				Location: retriever.Location{URI: "file:///fake/run/episode-1/a/a.log"},
				Score:    float64(i) + 0.25, Text: strings.Repeat("a <b> & ü ", 1+i*13), Agent: "a", Episode: "episode-1",
				Conversation: &conv, Time: &tm, Reading: retriever.ReadingSaid, Matches: [][2]int{{0, 1}},
			})
		}
		rp := newRequestProbeOf(t, res)
		enc, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []int{2, 9, 10, 12345} {
			for rp.id+1 < id {
				rp.call("run/unknownMethod", "{}")
			}
			body := rp.call("run/search", `{"query":"q"}`)
			want := `{"jsonrpc":"2.0","id":` + strconv.Itoa(rp.id) + `,"result":` + string(enc) + "}"
			if string(body) != want {
				t.Fatalf("%d items, id %d: the frame's body\n%s\nwant\n%s", items, rp.id, body, want)
			}
		}
	}
}
