package corpus

// This file holds the files' keys: what a query's evidence filter and tie
// order read of every file they meet (its agent, its episode, whether it is
// a record file and a conversational one, and its place in location
// order), eight bytes a file in one array by id, kept by the commits beside
// ByID. Read from the Files, each cold file was a File's cache line and its
// path's, spread over the heap (issue 33: cachegrind counted ~230 misses
// past LL a cheap search in the retriever's fileVerdict, Group and
// fileOrder); eight keys share a line.

import (
	"cmp"
	"slices"
	"strings"
)

// FileKey is what the evidence filter and the tie order read of a live
// file; the zero FileKey is no file's (a removed id's, or one past the
// ids).
type FileKey struct {
	word  uint32 // place<<keyFlagBits | the flags
	agent uint16 // the file's Agent
	ep    uint16 // its episode number's id (State.EpisodeNum names it)
}

// The key's flags.
const (
	keyLive           = 1 << iota // a committed file's
	keyRecord                     // Form.IsRecord
	keyConversational             // File.Conversational
	keyFlagBits       = iota
)

// The keys' room: past it (an agent id past 65,535, more than 65,536
// episode numbers met since the state was made or restored, or a place
// that does not fit) the keys are off, and the filter and the tie order
// read the Files (State.Key).
const (
	maxKeyAgent    = 1<<16 - 1
	maxKeyEpisodes = 1 << 16
	unplaced       = 1<<(32-keyFlagBits) - 1 // a key committed, not placed yet
	taken          = unplaced - 1            // an unplaced key's, once place has its id
	maxPlace       = taken - 1
)

// Live reports whether the key is a committed file's.
func (k FileKey) Live() bool { return k.word&keyLive != 0 }

// Record reports whether the file is a record file (Form.IsRecord).
func (k FileKey) Record() bool { return k.word&keyRecord != 0 }

// Conversational is the file's Conversational.
func (k FileKey) Conversational() bool { return k.word&keyConversational != 0 }

// Agent is the file's Agent.
func (k FileKey) Agent() uint32 { return uint32(k.agent) }

// Episode is the file's episode number's key: State.EpisodeNum of it is
// the file's EpNum.
func (k FileKey) Episode() uint16 { return k.ep }

// Place is the file's place in location order among the committed files:
// episode number (numerically: a longer number is the larger), then path
// byte-wise. Two live files' places differ; their order is theirs.
func (k FileKey) Place() uint32 { return k.word >> keyFlagBits }

// fileKeys are the committed files' keys by id, with what keeps them.
type fileKeys struct {
	byID   []FileKey
	epIDs  map[string]uint16 // episode number -> its key, given at its first file
	epNums []string          // by key
	// places is one past the last place given at the last placing: every
	// live key's place is below it, or unplaced until the commit's end.
	places uint32
	added  []uint32 // ids of keys committed not placed yet (one commit's)
	// addedByPath says that added is in path order (a restore's, seen as
	// it was made): the placing need not read every path to know it.
	addedByPath bool
	off         bool // an agent, episode or place past the room: Key says so
	// The last episode number looked up, and its key: a batch's files
	// mostly share it.
	lastNum string
	lastEp  uint16
	// The episodes' ranks in location order, by key, made again only when
	// an episode number was added since (ranked: how many were ranked);
	// and place's buffer of the placed ids in their order.
	rank   []uint16
	ranked int
	slot   []uint32
}

// Key returns file id's key, the zero key when no file of that id is
// committed; ok is false when the keys are off (a run with more agents,
// episode numbers or files than a key holds), and the caller reads the File.
// The caller holds the read lock.
func (c *State) Key(id uint32) (k FileKey, ok bool) {
	if c.keys.off {
		return FileKey{}, false
	}
	if int(id) < len(c.keys.byID) {
		return c.keys.byID[id], true
	}
	return FileKey{}, true
}

// EpisodeNum returns the episode number (EpNum's) whose key is ep (a
// FileKey's Episode). The caller holds the read lock.
func (c *State) EpisodeNum(ep uint16) string {
	if int(ep) < len(c.keys.epNums) {
		return c.keys.epNums[ep]
	}
	return ""
}

// reset drops every key (State.Forget, a restore).
func (k *fileKeys) reset() {
	*k = fileKeys{}
}

// episode returns episode number num's key, given now when it has none;
// false when no key is left.
func (k *fileKeys) episode(num string) (uint16, bool) {
	if k.epIDs != nil && num == k.lastNum {
		return k.lastEp, true
	}
	ep, ok := k.epIDs[num]
	if !ok {
		if len(k.epNums) >= maxKeyEpisodes {
			return 0, false
		}
		if k.epIDs == nil {
			k.epIDs = map[string]uint16{}
		}
		// Its own bytes: num is of a path, and a restore's paths are one
		// string, which a key kept past its files would keep whole.
		num = strings.Clone(num)
		ep = uint16(len(k.epNums))
		k.epIDs[num] = ep
		k.epNums = append(k.epNums, num)
	}
	k.lastNum, k.lastEp = k.epNums[ep], ep // the kept bytes, not the path's
	return ep, true
}

// set makes next's key, the committed version of its id; old is the
// version it replaces (nil: none). A new id, or one whose path changed, is
// placed at the commit's end (place).
func (k *fileKeys) set(old, next *File) {
	if k.off {
		return
	}
	ep, ok := k.episode(next.EpNum())
	if !ok || next.Agent > maxKeyAgent {
		k.turnOff()
		return
	}
	id := int(next.ID)
	if id >= len(k.byID) {
		k.byID = slices.Grow(k.byID, id+1-len(k.byID))[:id+1]
	}
	key := &k.byID[id]
	place := key.Place()
	if !key.Live() || old == nil || old.Rel != next.Rel {
		// Once a commit: a key set again before the commit's placing is
		// in added already.
		if place != unplaced || !key.Live() {
			k.added = append(k.added, next.ID)
		}
		place = unplaced
	}
	word := uint32(keyLive)
	if next.Form.IsRecord() {
		word |= keyRecord
	}
	if next.Conversational() {
		word |= keyConversational
	}
	*key = FileKey{word: place<<keyFlagBits | word, agent: uint16(next.Agent), ep: ep}
}

// remove drops file id's key.
func (k *fileKeys) remove(id uint32) {
	if !k.off && int(id) < len(k.byID) {
		k.byID[id] = FileKey{}
	}
}

// TurnKeysOff turns the keys off until the state is forgotten, as a run
// past their room does: Key says so, and the filter and the tie order read
// the Files. For the tests that hold the two ways equal. The caller holds
// the write lock.
func (c *State) TurnKeysOff() { c.keys.turnOff() }

// turnOff turns the keys off until the state is forgotten: the filter and
// the tie order read the Files.
func (k *fileKeys) turnOff() {
	*k = fileKeys{off: true}
}

// place gives the keys committed since the last placing their places in
// location order among the live files; the live keys are placed again, in
// their order, 0 up. It reads the Files of the new keys, and of as many
// placed ones as a binary search of each new one meets: a commit of k new
// files among n costs O(n + k log n), not a sort of every path.
func (k *fileKeys) place(c *State) {
	byPath := k.addedByPath // a restore's word, for this placing only
	k.addedByPath = false
	if k.off || len(k.added) == 0 {
		return
	}
	added := k.added[:0]
	for _, id := range k.added {
		if key := &k.byID[id]; key.Live() && key.Place() == unplaced {
			key.word = taken<<keyFlagBits | key.word&(1<<keyFlagBits-1)
			added = append(added, id)
		}
	}
	k.added = nil
	rank := k.episodeRanks()
	before := func(a, b uint32) int {
		if d := cmp.Compare(rank[k.byID[a].ep], rank[k.byID[b].ep]); d != 0 {
			return d
		}
		return strings.Compare(c.ByID[a].Rel, c.ByID[b].Rel)
	}
	sortAdded(added, byPath, c, rank, k, before)

	// The placed keys in their order (none after a reset: a restore's).
	var old []uint32
	if k.places > 0 {
		slot := slices.Grow(k.slot[:0], int(k.places))[:k.places]
		clear(slot)
		k.slot = slot
		for id, key := range k.byID {
			if p := key.Place(); key.Live() && p < taken {
				slot[p] = uint32(id) + 1
			}
		}
		old = slot[:0]
		for _, s := range slot {
			if s != 0 {
				old = append(old, s-1)
			}
		}
	}
	if len(old)+len(added) > maxPlace {
		k.turnOff()
		return
	}
	next, i := uint32(0), 0
	give := func(id uint32) {
		key := &k.byID[id]
		key.word = next<<keyFlagBits | key.word&(1<<keyFlagBits-1)
		next++
	}
	for _, id := range added {
		// The first placed key after it: the search starts where the last
		// new key's ended.
		j := gallop(i, len(old), func(j int) bool { return before(old[j], id) > 0 })
		for ; i < j; i++ {
			give(old[i])
		}
		give(id)
	}
	for ; i < len(old); i++ {
		give(old[i])
	}
	k.places = next
}

// episodeRanks returns the episodes' ranks by key: their numbers compared
// as the tie order does (CompareEpisodeNumbers), sorted again only when a
// number was added since the last ranking, not at each commit that adds a
// file.
func (k *fileKeys) episodeRanks() []uint16 {
	if k.ranked == len(k.epNums) && len(k.rank) == len(k.epNums) {
		return k.rank
	}
	eps := make([]uint16, len(k.epNums))
	for i := range eps {
		eps[i] = uint16(i)
	}
	slices.SortFunc(eps, func(a, b uint16) int { return CompareEpisodeNumbers(k.epNums[a], k.epNums[b]) })
	rank := make([]uint16, len(k.epNums))
	for r, ep := range eps {
		rank[ep] = uint16(r)
	}
	k.rank, k.ranked = rank, len(k.epNums)
	return rank
}

// sortAdded sorts new keys' ids in location order. A restore's arrive
// sorted by path (the state blob's order; byPath: seen as they were made,
// else checked here): then only their episodes' order is made, in one
// pass, stable; a sort of 100,000 paths would be tens of milliseconds of a
// reopen.
func sortAdded(added []uint32, byPath bool, c *State, rank []uint16, k *fileKeys, before func(a, b uint32) int) {
	byPath = byPath || slices.IsSortedFunc(added, func(a, b uint32) int { return strings.Compare(c.ByID[a].Rel, c.ByID[b].Rel) })
	if !byPath {
		slices.SortFunc(added, before)
		return
	}
	// Counting sort by the episode's rank, stable.
	start := make([]int, len(rank)+1)
	for _, id := range added {
		start[int(rank[k.byID[id].ep])+1]++ // an int: the last of 65,536 ranks is 65,535
	}
	for r := 1; r < len(start); r++ {
		start[r] += start[r-1]
	}
	out := make([]uint32, len(added))
	for _, id := range added {
		r := rank[k.byID[id].ep]
		out[start[r]] = id
		start[r]++
	}
	copy(added, out)
}

// gallop returns the first j in [lo, hi) where f holds, hi when none (f
// false then true), in steps doubling from lo, then a binary search of the
// last step: a commit's new files mostly go in near each other (a folder's
// files), a compare or two each, where a search of all the placed files
// took log n, each a file's path read.
func gallop(lo, hi int, f func(int) bool) int {
	if lo >= hi || f(lo) {
		return lo
	}
	for step := 1; ; step *= 2 { // f(lo) does not hold
		next := lo + step
		if next >= hi {
			break
		}
		if f(next) {
			hi = next
			break
		}
		lo = next
	}
	lo++
	for lo < hi { // f(lo-1) does not hold; f(hi) does, or hi is the end
		m := int(uint(lo+hi) >> 1)
		if !f(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// CompareEpisodeNumbers orders episode numbers (File.EpNum's, without
// leading zeros) numerically: a longer number is the larger. The
// retriever's tie order and its other time orders use it, and the keys'
// places follow it.
func CompareEpisodeNumbers(a, b string) int {
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return strings.Compare(a, b)
}

// RestoreKeys makes every key again from ByID, after a restore has set it:
// files are the restored files in the state blob's order (by path), which
// the placing takes as it is. The caller holds the write lock.
func (c *State) RestoreKeys(files []*File) {
	c.keys.reset()
	c.keys.byID = make([]FileKey, 0, len(c.ByID))
	// Whether files come by path is seen here, each File read once: a
	// second pass over 100,000 cold Files (and their paths) was some 10 ms
	// of a reopen's.
	byPath, last := true, ""
	for _, fs := range files {
		if int(fs.ID) < len(c.ByID) && c.ByID[fs.ID] == fs {
			c.keys.set(nil, fs)
			byPath = byPath && fs.Rel >= last
			last = fs.Rel
		}
	}
	// ByID's files not among files (none, from a restore): made too, found
	// by their keys, not by reading every File again.
	for id, fs := range c.ByID {
		if fs == nil || c.keys.off {
			continue
		}
		if id >= len(c.keys.byID) || !c.keys.byID[id].Live() {
			c.keys.set(nil, fs)
			byPath = false
		}
	}
	c.keys.addedByPath = byPath
	c.keys.place(c)
}
