package corpus

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"runls/recordformat"
)

// checkKeys holds every key of c to its File (the brute force): live for a
// committed file alone, its agent, form flags and episode as the File says,
// and the live files' places in location order (episode number
// numerically, then path), each distinct.
func checkKeys(t *testing.T, c *State, what string) {
	t.Helper()
	var live []*File
	for id := 0; id <= len(c.ByID)+1; id++ {
		fs := c.File(uint32(id))
		k, ok := c.Key(uint32(id))
		if !ok {
			t.Fatalf("%s: keys off", what)
		}
		if fs == nil {
			if k != (FileKey{}) {
				t.Fatalf("%s: id %d has no file but key %+v", what, id, k)
			}
			continue
		}
		live = append(live, fs)
		want := []any{true, fs.Form.IsRecord(), fs.Conversational(), fs.Agent, fs.EpNum()}
		got := []any{k.Live(), k.Record(), k.Conversational(), k.Agent(), c.EpisodeNum(k.Episode())}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: %s's key %v, want %v", what, fs.Rel, got, want)
		}
	}
	if len(c.Files) != len(live) {
		t.Fatalf("%s: %d files, %d by id", what, len(c.Files), len(live))
	}
	slices.SortFunc(live, func(a, b *File) int {
		if d := CompareEpisodeNumbers(a.EpNum(), b.EpNum()); d != 0 {
			return d
		}
		return strings.Compare(a.Rel, b.Rel)
	})
	for i := 1; i < len(live); i++ {
		a, _ := c.Key(live[i-1].ID)
		b, _ := c.Key(live[i].ID)
		if a.Place() >= b.Place() {
			t.Fatalf("%s: %s placed %d, after it %s placed %d", what, live[i-1].Rel, a.Place(), live[i].Rel, b.Place())
		}
	}
}

// randomFile is a file of a random path (episodes with leading zeros and
// none, folders a path's parts), agent and layout.
func randomFile(r *rand.Rand, id uint32) *File {
	eps := []string{"episode-1", "episode-2", "episode-10", "episode-007", "episode-7", "episode-0", "ep9", ""}
	ep := eps[r.IntN(len(eps))]
	name := fmt.Sprintf("a%d/f%d%s", r.IntN(4), r.IntN(50), []string{".log", ".history", ".md", ".txt"}[r.IntN(4)])
	rel := name
	if ep != "" {
		rel = ep + "/" + name
	}
	fs := &File{ID: id, Agent: uint32(r.IntN(5)), Form: recordformat.FormOf(rel)}
	if ep != "" && ep != "ep9" {
		fs.SetPath(rel, ep, episodeNumber(ep))
	} else {
		fs.SetPath(rel, "", "")
	}
	if fs.Form.IsRecord() && r.IntN(3) == 0 {
		fs.Layout, fs.LayoutSet = recordformat.Layout(1+r.IntN(2)), true // foreign
	}
	return fs
}

// TestFileKeysFollowCommits: the keys equal what the Files say after every
// commit of random batches: files added, read again (their layout
// changed), read from the start, removed, added and removed in one commit,
// confirmed, a restore from files by path and in any order, and Forget.
func TestFileKeysFollowCommits(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 33))
		c := &State{Files: map[string]*File{}}
		for round := range 40 {
			var updates []*Update
			var removed []*File
			inBatch := map[string]bool{}
			for range 1 + r.IntN(12) {
				switch op := r.IntN(10); {
				case op < 5: // a new file
					fs := randomFile(r, c.NextID)
					if c.Files[fs.Rel] != nil || inBatch[fs.Rel] {
						continue
					}
					c.NextID++
					inBatch[fs.Rel] = true
					updates = append(updates, &Update{Next: fs, Fresh: true, Agent: fs.Agent})
				case op < 8 && len(c.Files) > 0: // read again, or from its start
					old := c.File(randomLive(r, c))
					if inBatch[old.Rel] {
						continue
					}
					inBatch[old.Rel] = true
					next := old.Clone()
					fresh := r.IntN(2) == 0
					if fresh {
						next = old.Fresh(nil)
					}
					if next.Form.IsRecord() {
						next.Layout = recordformat.Layout(r.IntN(3))
					}
					updates = append(updates, &Update{Old: old, Next: next, Fresh: fresh, Agent: old.Agent})
				case op < 9 && len(c.Files) > 0:
					old := c.File(randomLive(r, c))
					if inBatch[old.Rel] {
						continue
					}
					inBatch[old.Rel] = true
					removed = append(removed, old)
				case len(c.Files) > 0:
					c.Confirm(c.File(randomLive(r, c)), int64(round))
				}
			}
			c.Commit(nil, updates, removed, nil)
			checkKeys(t, c, fmt.Sprintf("seed %d round %d", seed, round))
		}
		// A restore: the files by path (the state blob's order), then in
		// any order.
		files := make([]*File, 0, len(c.Files))
		for _, fs := range c.Files {
			files = append(files, fs)
		}
		slices.SortFunc(files, func(a, b *File) int { return strings.Compare(a.Rel, b.Rel) })
		c.RestoreKeys(files)
		checkKeys(t, c, fmt.Sprintf("seed %d restored by path", seed))
		r.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
		c.RestoreKeys(files[:len(files)/2])
		checkKeys(t, c, fmt.Sprintf("seed %d restored in any order", seed))
		c.Forget()
		checkKeys(t, c, fmt.Sprintf("seed %d forgotten", seed))
	}
}

// randomLive returns a committed file's id.
func randomLive(r *rand.Rand, c *State) uint32 {
	for {
		if id := uint32(r.IntN(len(c.ByID))); c.ByID[id] != nil {
			return id
		}
	}
}

// TestFileKeysOff: an agent id past a key's room turns the keys off (Key
// says so, and the retriever reads the Files) until the state is
// forgotten.
func TestFileKeysOff(t *testing.T) {
	c := &State{Files: map[string]*File{}}
	a := &File{ID: 0, Agent: 1, Form: recordformat.Log}
	a.SetPath("episode-1/a/a.log", "episode-1", "1")
	big := &File{ID: 1, Agent: maxKeyAgent + 1}
	big.SetPath("episode-1/b/notes.md", "episode-1", "1")
	c.Commit(nil, []*Update{{Next: a}}, nil, nil)
	if _, ok := c.Key(0); !ok {
		t.Fatal("keys off with one agent")
	}
	c.Commit(nil, []*Update{{Next: big}}, nil, nil)
	if _, ok := c.Key(0); ok {
		t.Fatal("keys on with an agent id past their room")
	}
	c.Forget()
	c.Commit(nil, []*Update{{Next: a}}, nil, nil)
	checkKeys(t, c, "forgotten")
}

// TestFileKeysEpisodeRoom: the keys hold 65,536 episode numbers (the last
// one's rank is 65,535, counted in an int by the restore's placing) and turn
// off at the 65,537th, whether restored (placed in path order) or
// committed (a commit's one new file, in path order too, after 65,535
// numbers met by files since removed: the numbers met are kept).
func TestFileKeysEpisodeRoom(t *testing.T) {
	episodeFile := func(id uint32, i int) *File {
		fs := &File{ID: id, Form: recordformat.Plain}
		e := fmt.Sprintf("episode-%d", i)
		fs.SetPath(e+"/a/n.md", e, fmt.Sprint(i))
		return fs
	}
	for _, n := range []int{maxKeyEpisodes - 1, maxKeyEpisodes, maxKeyEpisodes + 1} {
		t.Run(fmt.Sprintf("restore %d", n), func(t *testing.T) {
			c := &State{Files: map[string]*File{}, ByID: make([]*File, n)}
			var files []*File
			for i := range n {
				fs := episodeFile(uint32(i), i)
				files = append(files, fs)
				c.ByID[fs.ID], c.Files[fs.Rel] = fs, fs
			}
			slices.SortFunc(files, func(a, b *File) int { return strings.Compare(a.Rel, b.Rel) })
			c.RestoreKeys(files)
			if _, on := c.Key(0); on != (n <= maxKeyEpisodes) {
				t.Fatalf("%d episode numbers: keys on %v", n, on)
			}
			if n <= maxKeyEpisodes {
				checkKeys(t, c, fmt.Sprintf("%d restored", n))
			}
		})
	}
	t.Run("commit", func(t *testing.T) {
		c := &State{Files: map[string]*File{}}
		var gone []*Update
		var files []*File
		for i := range maxKeyEpisodes - 1 {
			fs := episodeFile(c.NextID, i)
			c.NextID++
			gone, files = append(gone, &Update{Next: fs, Fresh: true}), append(files, fs)
		}
		c.Commit(nil, gone, nil, nil)
		c.Commit(nil, nil, files, nil)
		last := episodeFile(c.NextID, maxKeyEpisodes-1)
		c.NextID++
		c.Commit(nil, []*Update{{Next: last, Fresh: true}}, nil, nil)
		checkKeys(t, c, "the 65,536th number")
		past := episodeFile(c.NextID, maxKeyEpisodes)
		c.NextID++
		c.Commit(nil, []*Update{{Next: past, Fresh: true}}, nil, nil)
		if _, on := c.Key(0); on {
			t.Fatal("keys on with 65,537 episode numbers met")
		}
	})
}

// TestFileKeysRestoreThenCommit: a restore's word that its files came by
// path holds for its own placing only: a restore of no file, then a commit
// of files out of path order, places them by their paths.
func TestFileKeysRestoreThenCommit(t *testing.T) {
	c := &State{Files: map[string]*File{}}
	c.RestoreKeys(nil)
	var updates []*Update
	for i, rel := range []string{"episode-1/b/z.md", "episode-1/a/y.md", "episode-1/a/x.md"} {
		fs := &File{ID: uint32(i), Form: recordformat.Plain}
		fs.SetPath(rel, "episode-1", "1")
		updates = append(updates, &Update{Next: fs})
		c.NextID++
	}
	c.Commit(nil, updates, nil, nil)
	checkKeys(t, c, "committed after an empty restore")
}

// TestFileKeySize: eight keys a cache line, and no more than eight bytes a
// file on the heap (issue 33: 100,000-file runs).
func TestFileKeySize(t *testing.T) {
	if n := unsafe.Sizeof(FileKey{}); n != 8 {
		t.Errorf("FileKey is %d bytes, want 8", n)
	}
}

// BenchmarkRestoreKeys: the keys of 100,000 restored files, by path.
func BenchmarkRestoreKeys(b *testing.B) {
	c := &State{Files: map[string]*File{}}
	var files []*File
	for ep := range 10 {
		for a := range 100 {
			for n := range 100 {
				fs := &File{ID: uint32(len(files)), Agent: uint32(a), Form: recordformat.Plain}
				e := fmt.Sprintf("episode-%d", ep+1)
				fs.SetPath(fmt.Sprintf("%s/agent%03d/note%03d.md", e, a, n), e, fmt.Sprint(ep+1))
				files = append(files, fs)
			}
		}
	}
	slices.SortFunc(files, func(a, b *File) int { return strings.Compare(a.Rel, b.Rel) })
	c.ByID = make([]*File, len(files))
	for _, fs := range files {
		c.ByID[fs.ID] = fs
	}
	b.ResetTimer()
	for range b.N {
		c.RestoreKeys(files)
	}
}

// BenchmarkCommitKeys: the keys of a first index of 100,000 files committed
// in 36 batches (a run's 1/MaxBatchShare each), the batches in the walk's
// order (by path) and the files' order in each shuffled.
func BenchmarkCommitKeys(b *testing.B) {
	var files []*File
	for ep := range 10 {
		for a := range 100 {
			for n := range 100 {
				fs := &File{Agent: uint32(a), Form: recordformat.Plain}
				e := fmt.Sprintf("episode-%d", ep+1)
				fs.SetPath(fmt.Sprintf("%s/agent%03d/note%03d.md", e, a, n), e, fmt.Sprint(ep+1))
				files = append(files, fs)
			}
		}
	}
	slices.SortFunc(files, func(a, b *File) int { return strings.Compare(a.Rel, b.Rel) })
	r := rand.New(rand.NewPCG(1, 2))
	for i, fs := range files {
		fs.ID = uint32(i)
	}
	batch := len(files)/36 + 1
	for range b.N {
		c := &State{Files: map[string]*File{}}
		for lo := 0; lo < len(files); lo += batch {
			part := slices.Clone(files[lo:min(lo+batch, len(files))])
			r.Shuffle(len(part), func(i, j int) { part[i], part[j] = part[j], part[i] })
			updates := make([]*Update, len(part))
			for i, fs := range part {
				updates[i] = &Update{Next: fs}
			}
			c.Commit(nil, updates, nil, nil)
		}
	}
}

// BenchmarkCommitOneFile: a run of 100,000 files where an agent writes a
// new file (a commit of one, placed among the others), then it is removed:
// what a live run's commits that add a file cost, under the index's write
// lock (the keys' placing is O(n) a commit that adds files).
func BenchmarkCommitOneFile(b *testing.B) {
	c := &State{Files: map[string]*File{}}
	var updates []*Update
	for ep := range 10 {
		for a := range 100 {
			for n := range 100 {
				fs := &File{ID: c.NextID, Agent: uint32(a), Form: recordformat.Plain}
				c.NextID++
				e := fmt.Sprintf("episode-%d", ep+1)
				fs.SetPath(fmt.Sprintf("%s/agent%03d/note%03d.md", e, a, n), e, fmt.Sprint(ep+1))
				updates = append(updates, &Update{Next: fs})
			}
		}
	}
	c.Commit(nil, updates, nil, nil)
	b.ReportAllocs()
	for b.Loop() {
		fs := &File{ID: c.NextID, Agent: 50, Form: recordformat.Plain}
		c.NextID++
		fs.SetPath("episode-5/agent050/new.md", "episode-5", "5")
		c.Commit(nil, []*Update{{Next: fs}}, nil, nil)
		c.Commit(nil, nil, []*File{fs}, nil)
	}
}

// TestGallop: gallop finds what sort.Search finds, from any start.
func TestGallop(t *testing.T) {
	for n := range 40 {
		for first := 0; first <= n; first++ {
			for lo := 0; lo <= n; lo++ {
				f := func(i int) bool {
					if i < lo || i >= n {
						t.Fatalf("n %d first %d lo %d: asked %d", n, first, lo, i)
					}
					return i >= first
				}
				if got, want := gallop(lo, n, f), max(lo, first); got != want {
					t.Fatalf("gallop(%d, %d) with the first at %d = %d, want %d", lo, n, first, got, want)
				}
			}
		}
	}
}
