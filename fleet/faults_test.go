package fleet

// Masking by default, a store that answers for part of its data or not at
// all, what the store drops, and the bound on candidates (issue 32).

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runls/retriever"
)

// secrets are planted in a run; none may reach the store.
var secrets = []string{
	"AKIAZ2X7QWERTYUIOPLK",
	"ghp_8f3kZq1xR7tLmN2pW9vYc4bH6dJ0sA5eGi3K",
	"hunter2-correct-horse",
	"MIIEowIBAAKCAQEAq7BFUpkGp3+LQmlQ",
	"/home/alice/.ssh/id_rsa",
}

func plantedRun(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "planted")
	dir := filepath.Join(root, "episode-1", "alice")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	logText := "2026-10-21 18:00:00 INFO  [running] [conv-1] Alice set AWS key AKIAZ2X7QWERTYUIOPLK for the deploy\n" +
		"2026-10-21 18:00:01 INFO  [running] [conv-1] Alice cloned with ghp_8f3kZq1xR7tLmN2pW9vYc4bH6dJ0sA5eGi3K today\n" +
		"2026-10-21 18:00:02 WARN  [running] [conv-1] Alice login failed: password=hunter2-correct-horse deploy\n" +
		"2026-10-21 18:00:03 INFO  [running] [conv-1] Alice read /home/alice/.ssh/id_rsa for the deploy\n"
	notes := "deploy notes\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq7BFUpkGp3+LQmlQ\nZmFrZSBrZXkgYm9keSBmb3IgdGVzdHM=\n-----END RSA PRIVATE KEY-----\nafter the key\n"
	for name, text := range map[string]string{"alice.log": logText, "notes.md": notes} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestMaskedByDefault(t *testing.T) {
	c := startCluster(t)
	st := c.store(t)
	root := plantedRun(t)
	shipRun(t, st, root, "planted", true, "")
	// The store itself, every field of every entry: no secret.
	rows, _, err := st.query(context.Background(), `{run="planted"}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 5 {
		t.Fatalf("the store holds %d entries of the run", len(rows))
	}
	masked := 0
	for _, r := range rows {
		for k, v := range r {
			for _, s := range secrets {
				if strings.Contains(v, s) || strings.Contains(strings.ToLower(v), strings.ToLower(s)) {
					t.Errorf("field %s of an entry holds the secret %q: %q", k, s, v)
				}
			}
		}
		if strings.Contains(r["_msg"], "<secret>") || strings.Contains(r["_msg"], "<path>") {
			masked++
		}
	}
	if masked < 4 {
		t.Errorf("%d entries show a placeholder, want at least 4", masked)
	}
	// The store's word search finds none of them either.
	for _, w := range []string{"AKIAZ2X7QWERTYUIOPLK", "hunter2", "MIIEowIBAAKCAQEAq7BFUpkGp3"} {
		rows, _, err := st.query(context.Background(), `{run="planted"} `+quote(w))
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 0 {
			t.Errorf("the store finds %q: %v", w, rows)
		}
	}
}

func TestStorageNodeDown(t *testing.T) {
	c := startCluster(t, "-search.allowPartialResponse")
	st := c.store(t)
	shipRun(t, st, "../testdata/sample-run", "faults", true, "")
	ctx := context.Background()
	req := Request{Request: retriever.Request{Query: "deploy staging migration", TopK: 10}, Runs: []string{"faults"}}
	whole, err := (&Searcher{Store: st}).Search(ctx, req)
	if err != nil || len(whole.Items) == 0 {
		t.Fatalf("before: %v, %d items", err, len(whole.Items))
	}
	c.kill(t, "STORAGE2")
	// Though the front allows partial answers, runls asks for a whole one:
	// an error naming the cause, never a silent partial answer.
	_, err = (&Searcher{Store: st}).Search(ctx, req)
	var se *StoreError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "storage node") {
		t.Fatalf("a storage node down: %v, want an error naming it", err)
	}
	// With --partial: the answer, with a notice saying it is partial.
	partial := c.store(t)
	partial.AllowPartial = true
	res, err := (&Searcher{Store: partial}).Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range res.Notices {
		found = found || (n.Field == "fleet" && strings.Contains(n.Message, "part of its data"))
	}
	if !found {
		t.Errorf("a partial answer without its notice: %+v", res.Notices)
	}
	c.kill(t, "FRONT")
	_, err = (&Searcher{Store: st}).Search(ctx, req)
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Errorf("the front down: %v, want the store unreachable", err)
	}
}

func TestDroppedRecordsAreAnError(t *testing.T) {
	m := &dropStore{}
	err := CheckHeld(context.Background(), m, map[string]int64{"r": 5}, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "retention") {
		t.Errorf("a store that kept 3 of 5 records: %v", err)
	}
}

// dropStore holds 3 records of every run, whatever it was sent.
type dropStore struct{ memStore }

func (d *dropStore) Held(_ context.Context, runs []string) (map[string]Held, error) {
	out := map[string]Held{}
	for _, r := range runs {
		out[r] = Held{Records: 3, Unique: 3}
	}
	return out, nil
}

func TestCandidateBound(t *testing.T) {
	c := startCluster(t)
	st := c.store(t)
	shipRun(t, st, "../testdata/sample-run", "bound", false, "")
	ctx := context.Background()
	req := Request{Request: retriever.Request{Query: "the deploy", TopK: 5}, Runs: []string{"bound"}}
	res, err := (&Searcher{Store: st, MaxCandidates: 4}).Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var notice *retriever.Notice
	for i, n := range res.Notices {
		if n.Field == "candidates" {
			notice = &res.Notices[i]
		}
	}
	if notice == nil || !strings.Contains(notice.Message, "ranked 4 of ") || !strings.Contains(notice.Message, "narrow by run, episode or time") {
		t.Fatalf("no bound notice: %+v", res.Notices)
	}
	if len(res.Items) == 0 {
		t.Errorf("the bounded set ranked nothing")
	}
	for _, it := range res.Items {
		if it.Run != "bound" {
			t.Errorf("an item names run %q", it.Run)
		}
	}
}
