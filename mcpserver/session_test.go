package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runls/retriever"
)

// Secrets planted in the run and in requests: credentials and a path that
// the masker hides.
const (
	plantedKey   = "AKIAPLANTED0SECRET11"
	plantedToken = "ghp_PLANTEDplantedPLANTEDplanted01234567"
	plantedPath  = "/home/jane/private/plan.txt"
	requestKey   = "AKIAREQUEST0SECRET22"
)

// TestMaskedNoSecret: with masking on, no planted secret is in any text any
// tool returns: search hits, read lines (a key block whose start is above
// the lines read included), run_info, and errors that quote an argument.
func TestMaskedNoSecret(t *testing.T) {
	key := "-----BEGIN OPENSSH PRIVATE KEY-----\n" +
		"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
		"QyNTUxOQAAACDgNLk2mWYPKmnbXxGcuwqjnSRUPzp6RYVHOUJlOxrPyAAAAJiBBwKXgQcC\n" +
		"-----END OPENSSH PRIVATE KEY-----\n"
	root := writeRun(t, map[string]string{
		"episode-1/alice/alice.history": "2026-10-21 18:00:00 [running] [conv-1] Alice deploy uses key " + plantedKey + " for the bucket\n" +
			"2026-10-21 18:00:01 [running] [conv-1] Alice was told: the deploy token is " + plantedToken + "\n" +
			"  and the plan is in " + plantedPath + "\n",
		"episode-1/alice/alice.log": "2026-10-21 18:00:02 WARN  [running] [-] Alice deploy failed with " + plantedKey + "\n" +
			"2026-10-21 18:00:03 INFO  [running] [conv-1] Alice deploy key block:\n" + indent(key),
		"episode-1/bob/notes.txt": "deploy notes\nthe key:\n" + key + "deploy again with " + plantedToken + "\n",
	})
	cs := start(t, root, startOpts{mask: true})
	var answers []string
	keep := func(res *mcp.CallToolResult, err error) {
		if err != nil {
			answers = append(answers, err.Error())
			return
		}
		data, merr := json.Marshal(res)
		if merr != nil {
			t.Fatal(merr)
		}
		answers = append(answers, string(data))
	}
	ctx := context.Background()
	for _, args := range []map[string]any{
		{"query": "deploy key token plan", "topK": 50},
		{"query": "deploy", "episode": "episode-1", "conversation": "conv-1", "topK": 50},
		{"query": plantedKey + " " + plantedToken, "episode": "episode-1", "conversation": "conv-1"},
		{"turnMessage": "deploy " + requestKey, "episode": "episode-1", "conversation": "-"},
		{"query": "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", "episode": "episode-1", "conversation": "conv-1"},
		{"query": "x", "episode": "episode-" + requestKey},
		{"query": "x", "agent": "../" + requestKey},
		{"query": "x", "topK": requestKey},
		{"query": "x", requestKey: 1},
	} {
		keep(cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: args}))
	}
	for _, p := range []string{"episode-1/alice/alice.history", "episode-1/alice/alice.log", "episode-1/bob/notes.txt"} {
		for _, first := range []int{1, 2, 3, 4, 5} {
			keep(cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": p, "startLine": first}}))
		}
	}
	keep(cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": "episode-1/" + requestKey}}))
	keep(cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": plantedPath}}))
	keep(cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_info", Arguments: map[string]any{}}))
	for _, args := range []map[string]any{
		{"episode": "episode-1"},
		{"episode": "episode-1", "conversation": "conv-1", "limit": 1},
		{"episode": "episode-1", "agent": "alice", "minLevel": "INFO"},
		{"episode": "episode-1", "conversation": requestKey},
		{"episode": "episode-1", "cursor": requestKey},
		{"episode": "episode-1", "agent": requestKey + "/"},
	} {
		keep(cs.CallTool(ctx, &mcp.CallToolParams{Name: "records", Arguments: args}))
	}
	keep(cs.CallTool(ctx, &mcp.CallToolParams{Name: requestKey, Arguments: map[string]any{}}))

	all := strings.Join(answers, "\n")
	for _, secret := range []string{plantedKey, plantedToken, plantedPath, "/home/jane", requestKey, "b3BlbnNzaC1rZXkt", "QyNTUxOQAAACDgNLk2"} {
		if strings.Contains(all, secret) {
			t.Errorf("an answer holds %q", secret)
		}
	}
	if !strings.Contains(all, "<secret>") || !strings.Contains(all, "deploy") {
		t.Errorf("the answers hold no masked evidence, so the test saw none:\n%s", all)
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// slowEngine is an engine whose first indexing reports progress and then
// waits to be released, and whose searches wait for theirs.
// It embeds no retriever.Index: a zero one's methods (SearchPartial,
// AnswerGrace, MergeIdle) would be promoted and panic when a server asks them.
type slowEngine struct {
	release   chan struct{}
	searching chan struct{}
	mu        sync.Mutex
	cancelled int
}

func newSlowEngine() *slowEngine {
	return &slowEngine{release: make(chan struct{}), searching: make(chan struct{}, 8)}
}

func (e *slowEngine) Root() string { return "/run" }
func (e *slowEngine) Refresh(ctx context.Context, progress func(retriever.Progress)) (retriever.Changes, error) {
	if progress == nil {
		return retriever.Changes{}, nil
	}
	for i := int64(1); ; i++ {
		progress(retriever.Progress{FilesDone: int(i), FilesTotal: 100, BytesDone: i * 10, BytesTotal: 1000})
		select {
		case <-e.release:
			return retriever.Changes{}, nil
		case <-ctx.Done():
			return retriever.Changes{}, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
func (e *slowEngine) Watch(ctx context.Context, _ func(retriever.Changes)) error {
	<-ctx.Done()
	return ctx.Err()
}
func (e *slowEngine) Search(ctx context.Context, req retriever.Request) (retriever.Result, error) {
	if req.Query != "slow" {
		return retriever.Result{Items: []retriever.Item{}}, nil
	}
	e.searching <- struct{}{}
	<-ctx.Done()
	e.mu.Lock()
	e.cancelled++
	e.mu.Unlock()
	return retriever.Result{}, ctx.Err()
}

func (e *slowEngine) Records(context.Context, retriever.RecordsRequest) (retriever.RecordsResult, error) {
	return retriever.RecordsResult{}, errors.New("no records")
}
func (e *slowEngine) Info(context.Context) (retriever.Info, error) {
	return retriever.Info{Root: "file:///run", Indexing: retriever.IndexingInfo{Done: true}}, nil
}
func (e *slowEngine) ReadLines(context.Context, retriever.ReadRequest) (retriever.Lines, error) {
	return retriever.Lines{}, errors.New("no files")
}

// TestProgressAndCancel: a call made while the first indexing runs waits for
// it, with increasing progress notifications when it carries a progress
// token; a call cancelled while it waits, or while it searches, ends at once
// (the search sees its context end), and the session answers on.
func TestProgressAndCancel(t *testing.T) {
	eng := newSlowEngine()
	var mu sync.Mutex
	var progress []float64
	got := make(chan struct{}, 100)
	cs := start(t, "", startOpts{engine: eng, client: &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
			select {
			case got <- struct{}{}:
			default:
			}
		},
	}})

	// Cancelled while it waits for the indexing.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_info", Arguments: map[string]any{}})
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled call: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled call did not end")
	}

	// With a progress token: notifications while it waits.
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
			Name: "search", Arguments: map[string]any{"query": "fast"}, Meta: mcp.Meta{"progressToken": "tok-1"},
		})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for range 3 {
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("no progress notification")
		}
	}
	close(eng.release)
	select {
	case res := <-done:
		if res == nil || res.IsError {
			t.Fatalf("after the indexing: %+v", res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not end after the indexing")
	}
	mu.Lock()
	for i := 1; i < len(progress); i++ {
		if progress[i] <= progress[i-1] {
			t.Errorf("progress %v does not increase", progress)
			break
		}
	}
	mu.Unlock()

	// Cancelled while it searches: the engine sees its context end.
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "slow"}})
		errc <- err
	}()
	<-eng.searching
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("a search cancelled: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		eng.mu.Lock()
		n := eng.cancelled
		eng.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the engine's search did not see the cancellation")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if res := call(t, cs, "run_info", map[string]any{}); res.IsError {
		t.Errorf("after the cancellations: %s", text(res))
	}
}

// graceEngine is a slowEngine with its own grace (retriever.Index.AnswerGrace)
// and a partial answer of its own, marked as retriever.Index marks one.
type graceEngine struct {
	*slowEngine
	grace time.Duration
}

func (e *graceEngine) AnswerGrace() time.Duration { return e.grace }
func (e *graceEngine) SearchPartial(context.Context, retriever.Request) (retriever.Result, error) {
	return retriever.Result{Items: []retriever.Item{}, Notices: []retriever.Notice{{Field: retriever.IndexingField, Value: "10%"}}}, nil
}

// TestSearchWaitsTheEngineGrace: search while the first indexing runs waits
// the engine's own grace (a reopen's is 50 ms, or none from 20,000 files),
// not retriever.PartialGrace: with an hour's grace it has not answered after
// four times PartialGrace, and answers whole once indexed; with none it
// answers partially, before the indexing ends.
func TestSearchWaitsTheEngineGrace(t *testing.T) {
	eng := &graceEngine{slowEngine: newSlowEngine(), grace: time.Hour}
	cs := start(t, "", startOpts{engine: eng})
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "fast"}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case res := <-done:
		t.Fatalf("answered within four times PartialGrace with an hour's grace: %s", text(res))
	case <-time.After(4 * retriever.PartialGrace):
	}
	close(eng.release)
	select {
	case res := <-done:
		if res == nil || res.IsError || strings.Contains(text(res), "partial") {
			t.Fatalf("once indexed: %+v, want a whole answer", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer once indexed")
	}

	eng = &graceEngine{slowEngine: newSlowEngine(), grace: 0}
	defer close(eng.release)
	cs = start(t, "", startOpts{engine: eng})
	res := call(t, cs, "search", map[string]any{"query": "fast"})
	if res.IsError || !strings.Contains(text(res), "partial") {
		t.Errorf("with no grace, while indexing: %s, want a partial answer", text(res))
	}
}
