package retriever

import (
	"context"
	"testing"

	"runls/internal/store"
	"runls/retriever/internal/persist"
)

// The grown file's stored offset and parser state are where following
// would go on: the pending tail is read again, with the record it was in.
func TestReopenCarryIsFollowingsState(t *testing.T) {
	root := writeRun(t, map[string]string{
		"episode-1/bob/bob.log": "2026-10-21 18:00:00.000 INFO [running] [c1] bob started\n  still the record",
	})
	ix := openTest(t, Options{Root: root})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	table := fileTableOf(ix)
	st := ix.state.Files["episode-1/bob/bob.log"]
	c, err := persist.DecodeCarry(table[0].Carry)
	must(t, err)
	if table[0].IndexedTo != st.ReadPos || c.Pending != st.ReadPos-st.CommitPos || c.InRecord != st.InRecord || c.CommitLine != st.CommitLine || c.ReadAt != st.ReadAt {
		t.Errorf("record %+v carry %+v; state readPos %d commitPos %d inRecord %v line %d", table[0], c, st.ReadPos, st.CommitPos, st.InRecord, st.CommitLine)
	}
	if back, err := persist.DecodeCarry(c.Encode()); err != nil || back != c {
		t.Errorf("carry round trip: %+v %v", back, err)
	}
	for _, bad := range [][]byte{nil, {2, 0, 0, 0, 0}, {1, 4, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0, 0, 0}} {
		if _, err := persist.DecodeCarry(bad); err == nil {
			t.Errorf("carry %v decoded", bad)
		}
	}
}

// fileTableOf is the index's file table now, sorted by path, as the cache's
// writer commits it.
func fileTableOf(ix *Index) []store.FileRecord {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	st, _ := persist.Save(&ix.state)
	out := make([]store.FileRecord, len(st.Files))
	for i, fs := range st.Files {
		out[i] = persist.FileRecord(fs)
	}
	return out
}
