package retriever

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"runls/retriever/internal/runfs"
)

// partialRun is a run of five episodes (one agent folder each, so one read
// job, and with a batch a folder one batch, an episode), every one holding
// evidence for "deploy".
func partialRun(t *testing.T) string {
	files := map[string]string{}
	for _, ep := range []int{1, 2, 3, 9, 10} {
		var b strings.Builder
		for i := range 40 {
			fmt.Fprintf(&b, "deploy step %d of episode %d went %s\n", i, ep, strings.Repeat("well ", i%7))
		}
		files[fmt.Sprintf("episode-%d/alice/notes.txt", ep)] = b.String()
	}
	return writeRun(t, files)
}

// holdAfterFirstBatch makes ix's first update commit one batch, then wait
// before each later one until release is closed; held is closed when a
// batch waits.
func holdAfterFirstBatch(ix *Index) (held, release chan struct{}) {
	held, release = make(chan struct{}), make(chan struct{})
	n := 0
	ix.workers, ix.batchInput = 1, 1 // one worker, a batch a folder
	ix.first.hold = func(context.Context) {
		n++
		if n == 2 {
			close(held)
		}
		if n >= 2 {
			<-release
		}
	}
	return held, release
}

func indexingNotices(res Result) []Notice {
	var out []Notice
	for _, n := range res.Notices {
		if n.Field == IndexingField {
			out = append(out, n)
		}
	}
	return out
}

// TestSearchPartial: a search made while the first index is built answers
// from the committed batches with the indexing notice (spec §12), run/info
// says indexing is not done, the newest episode is indexed first; once done
// the answer has no notice and equals a fresh complete index's.
func TestSearchPartial(t *testing.T) {
	ctx := context.Background()
	run := partialRun(t)
	ix := openTest(t, Options{Root: run})
	held, release := holdAfterFirstBatch(ix)
	refreshed := make(chan error, 1)
	go func() {
		_, err := ix.Refresh(ctx, nil)
		refreshed <- err
	}()
	<-held

	req := Request{Query: "deploy episode", TopK: MaxTopK}
	res, err := ix.SearchPartial(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	ns := indexingNotices(res)
	if len(ns) != 1 {
		t.Fatalf("partial answer's notices = %+v, want one %q notice", res.Notices, IndexingField)
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(ns[0].Value, "%"))
	if err != nil || !strings.HasSuffix(ns[0].Value, "%") || pct <= 0 || pct >= 100 {
		t.Errorf("notice value %q, want a share strictly between 0%% and 100%%", ns[0].Value)
	}
	if ns[0].Suggestion != nil || !strings.Contains(ns[0].Message, "partial") {
		t.Errorf("notice %+v: want a message saying the answer is partial, no suggestion", ns[0])
	}
	if len(res.Items) == 0 {
		t.Fatal("partial answer has no items: the first batch was committed")
	}
	for _, it := range res.Items {
		if it.Episode != "episode-10" {
			t.Errorf("partial answer holds %s of %s: the first batch is the newest episode's (episode-10)", it.Text, it.Episode)
		}
	}
	// A conversation notice cannot be judged from part of the run: episode-2's
	// records are not indexed yet. Once indexed, it is given (no record of
	// episode-2 is in conv-1: the run has notes only).
	convReq := Request{Query: "deploy", Episode: "episode-2", Conversation: "conv-1"}
	convRes, err := ix.SearchPartial(ctx, convReq)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range convRes.Notices {
		if n.Field == "conversation" {
			t.Errorf("partial answer gives %+v: a conversation notice cannot be judged from part of the run", n)
		}
	}
	syms, err := ix.SymbolsPartial(ctx, "deploy episode", 0)
	if err != nil {
		t.Fatal(err)
	}
	if ns := indexingNotices(syms); len(ns) != 1 || len(syms.Items) == 0 {
		t.Errorf("symbols while held: %d items, notices %+v: want some, with one %q notice", len(syms.Items), syms.Notices, IndexingField)
	}
	for _, it := range syms.Items {
		if it.Episode != "episode-10" {
			t.Errorf("partial symbols hold %s of %s: only episode-10 is indexed", it.Text, it.Episode)
		}
	}
	info, err := ix.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Indexing.Done || info.Indexing.Files != 1 {
		t.Errorf("run/info while held: indexing %+v, want done false and 1 file", info.Indexing)
	}

	close(release)
	if err := <-refreshed; err != nil {
		t.Fatal(err)
	}
	final, err := ix.SearchPartial(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if ns := indexingNotices(final); len(ns) != 0 {
		t.Errorf("answer after the first index: notices %+v, want no %q notice", ns, IndexingField)
	}
	if info, _ := ix.Info(ctx); !info.Indexing.Done {
		t.Errorf("run/info after the first index: %+v, want done", info.Indexing)
	}
	fresh := searchResult(t, openTest(t, Options{Root: run}), req)
	if !reflect.DeepEqual(final, fresh) {
		t.Errorf("answer after the first index differs from a fresh complete index's:\n got %+v\nwant %+v", final, fresh)
	}
	convFinal, err := ix.SearchPartial(ctx, convReq)
	if err != nil {
		t.Fatal(err)
	}
	if len(convFinal.Notices) != 1 || convFinal.Notices[0].Field != "conversation" {
		t.Errorf("answer after the first index: notices %+v, want the conversation notice", convFinal.Notices)
	}
	finalSyms, err := ix.SymbolsPartial(ctx, "deploy episode", 0)
	if err != nil {
		t.Fatal(err)
	}
	freshSyms, err := openTest(t, Options{Root: run}).Symbols(ctx, "deploy episode", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(finalSyms, freshSyms) || len(indexingNotices(finalSyms)) != 0 {
		t.Errorf("symbols after the first index differ from a fresh complete index's:\n got %+v\nwant %+v", finalSyms, freshSyms)
	}
	if len(final.Items) <= len(res.Items) {
		t.Errorf("complete answer has %d items, the partial one %d: want more", len(final.Items), len(res.Items))
	}
}

// TestSearchPartialNoUpdate: with no update under way, SearchPartial makes
// the first index itself and answers completely, without the notice.
func TestSearchPartialNoUpdate(t *testing.T) {
	run := partialRun(t)
	req := Request{Query: "deploy episode", TopK: MaxTopK}
	res, err := openTest(t, Options{Root: run}).SearchPartial(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if ns := indexingNotices(res); len(ns) != 0 {
		t.Errorf("notices %+v, want none", ns)
	}
	if want := searchResult(t, openTest(t, Options{Root: run}), req); !reflect.DeepEqual(res, want) {
		t.Errorf("got %+v\nwant %+v", res, want)
	}
}

// TestReadJobsNewestFirst: a first indexing reads the highest-numbered
// episode first (numerically: 10 after 9), larger jobs first within one;
// a later update reads larger jobs first whatever their episode.
func TestReadJobsNewestFirst(t *testing.T) {
	mk := func(rel, ep string, size int64) *task {
		return &task{c: runfs.Candidate{Rel: rel, EpNum: ep}, size: size}
	}
	tasks := []*task{
		mk("episode-2/a/x.log", "2", 3<<20),
		mk("episode-10/a/x.log", "10", 2<<20),
		mk("episode-9/a/x.log", "9", 5<<20),
		mk("episode-10/b/x.log", "10", 4<<20),
	}
	dirs := func(jobs []readJob) []string {
		var out []string
		for _, j := range jobs {
			out = append(out, j.dir)
		}
		return out
	}
	if got, want := dirs(readJobs(tasks, true)), []string{"episode-10/b", "episode-10/a", "episode-9/a", "episode-2/a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("first indexing: %v, want %v", got, want)
	}
	if got, want := dirs(readJobs(tasks, false)), []string{"episode-9/a", "episode-10/b", "episode-2/a", "episode-10/a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("later update: %v, want %v", got, want)
	}
}

// graceEngine has a grace of its own, as an Index has.
type graceEngine struct{ d time.Duration }

func (g graceEngine) AnswerGrace() time.Duration { return g.d }

// GraceOf: an engine's own grace when it has one, else PartialGrace (lsp's
// and mcpserver's engines and fakes, asked the same way).
func TestGraceOf(t *testing.T) {
	for _, c := range []struct {
		eng  any
		want time.Duration
	}{
		{graceEngine{0}, 0},
		{graceEngine{ReopenGrace}, ReopenGrace},
		{struct{}{}, PartialGrace},
		{nil, PartialGrace},
	} {
		if got := GraceOf(c.eng); got != c.want {
			t.Errorf("GraceOf(%#v) = %v, want %v", c.eng, got, c.want)
		}
	}
}
