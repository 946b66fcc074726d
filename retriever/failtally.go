package retriever

import (
	"cmp"
	"slices"
	"strings"

	"runls/recordformat"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/records"
	"runls/retriever/internal/runfs"
)

// The grouping of run/failures (spec §9): failures by pattern, the groups
// ranked by count (most first), then first time (none first), then
// pattern; a group's records by time, path and line, at most
// MaxFailureRecords of them; at most MaxFailureGroups groups.
//
// A failTally keeps the grouping between requests, so that what a file
// gained is added to it and nothing else is looked at again: an append
// costs what was appended, not the run's failures (273,000 at 1 GB, whose
// grouping took 1.4 s). It holds the files' failures that can no longer
// change (their memos' entries); the failures of each file's last record,
// which may still grow, are laid over it for one answer (overlay). Counts
// only grow and first times only move earlier as failures are added, so a
// group that was not among the best MaxFailureGroups can only join them
// when it gains a failure: the best are kept as they are (top), each with
// its agents, episodes and first records (detail), and only the groups
// that gained are looked at. A file dropped or read again from its start
// (its memo replaced) takes failures away: the tally is then made anew.
//
// freshFailures groups with the same code for the requests the tally does
// not keep (an episode, an agent, a level below memoFloor): a tally made
// for one answer.

// fileFailures is what one file gives a request: its failures that can no
// longer change (kept, from its memo) and those of its last record.
type fileFailures struct {
	fs         *corpus.File
	agent      string
	memo       *failMemo // where kept is from; nil: read for one request
	warnings   bool      // memo is fs's WARN records (fileMemo.warnings)
	kept, last []failEntry
}

// failTally is the run's failures grouped (see above).
type failTally struct {
	slots  []failSlot
	byMemo map[*failMemo]int32
	refs   []failRef
	groups []tallyGroup
	byText map[string]int32
	top    []int32 // the best groups, best first, at most MaxFailureGroups

	touched []int32 // groups that gained since the last settle
}

// failSlot is one file of a tally.
type failSlot struct {
	memo     *failMemo // nil in a fresh tally
	entries  []failEntry
	absorbed int // entries[:absorbed] are in the tally
	rel      string
	episode  string
	agent    string
	path     string
	uri      string
}

// failRef is one failure of a tally: entry idx of slot, and the next
// failure of its group (-1: none).
type failRef struct {
	slot, idx, next int32
}

type tallyGroup struct {
	pattern     string
	count       int32
	head, tail  int32 // the group's refs, as absorbed
	first, last int32 // refs of the earliest and latest timed failures; -1: none
	inTop       bool
	touched     bool
	detail      *groupDetail // kept while inTop
}

// groupDetail is what an answer says of a group besides its count and
// times: agents (byte-wise), episodes (numerically) and its first records
// (refs, by time, path and line, at most MaxFailureRecords).
type groupDetail struct {
	agents, episodes []string
	recs             []int32
}

func newFailTally() *failTally {
	return &failTally{byMemo: map[*failMemo]int32{}, byText: map[string]int32{}}
}

// follows reports whether t can be brought up to the files' failures by
// adding to it: every file it holds is still there, read as it was
// (the same memo), with no fewer failures kept.
func (t *failTally) follows(files []fileFailures) bool {
	if t == nil {
		return false
	}
	seen := 0
	for _, f := range files {
		if s, ok := t.byMemo[f.memo]; ok {
			if len(f.kept) < t.slots[s].absorbed {
				return false
			}
			seen++
		}
	}
	return seen == len(t.slots)
}

// update adds what the files' kept failures gained and answers with their
// last records' failures laid over the tally.
func (t *failTally) update(root string, files []fileFailures) FailuresResult {
	overlay := make([]overlayFailure, 0, len(files))
	for _, f := range files {
		s, ok := t.byMemo[f.memo]
		if !ok {
			s = t.addSlot(root, f, f.memo)
		}
		t.absorb(s, f.kept)
		for j := range f.last {
			overlay = append(overlay, overlayFailure{slot: s, e: &f.last[j]})
		}
	}
	t.settle()
	return t.answer(overlay)
}

// freshFailures groups the files' failures at level floor or above (and
// those holding an exception line) for one answer; pattern, when not "",
// keeps those of that pattern only.
func freshFailures(root string, files []fileFailures, floor recordformat.Level, pattern string) FailuresResult {
	t := newFailTally()
	for _, f := range files {
		var all []failEntry
		for _, part := range [][]failEntry{f.kept, f.last} {
			for _, e := range part {
				if pattern != "" && e.pattern != pattern {
					continue
				}
				if e.exception || (e.level != recordformat.None && e.level >= floor) {
					all = append(all, e)
				}
			}
		}
		if len(all) == 0 {
			continue
		}
		s := t.addSlot(root, f, nil)
		t.absorb(s, all)
	}
	t.settle()
	return t.answer(nil)
}

func (t *failTally) addSlot(root string, f fileFailures, memo *failMemo) int32 {
	path := runfs.Abs(root, f.fs.Rel)
	s := int32(len(t.slots))
	t.slots = append(t.slots, failSlot{memo: memo, rel: f.fs.Rel, episode: f.fs.Episode(), agent: f.agent, path: path, uri: FileURI(path)})
	if memo != nil {
		t.byMemo[memo] = s
	}
	return s
}

// absorb adds the failures of entries beyond what slot s holds; entries
// extends what was absorbed before.
func (t *failTally) absorb(s int32, entries []failEntry) {
	slot := &t.slots[s]
	slot.entries = entries
	for j := slot.absorbed; j < len(entries); j++ {
		e := &entries[j]
		gi, ok := t.byText[e.pattern]
		if !ok {
			gi = int32(len(t.groups))
			t.groups = append(t.groups, tallyGroup{pattern: e.pattern, head: -1, tail: -1, first: -1, last: -1})
			t.byText[e.pattern] = gi
		}
		r := int32(len(t.refs))
		t.refs = append(t.refs, failRef{slot: s, idx: int32(j), next: -1})
		g := &t.groups[gi]
		if g.tail >= 0 {
			t.refs[g.tail].next = r
		} else {
			g.head = r
		}
		g.tail = r
		g.count++
		if e.timed {
			if g.first < 0 || t.refLess(r, g.first) {
				g.first = r
			}
			if g.last < 0 || t.refLess(g.last, r) {
				g.last = r
			}
		}
		if g.detail != nil {
			t.addDetail(g.detail, r)
		}
		if !g.touched {
			g.touched = true
			t.touched = append(t.touched, gi)
		}
	}
	slot.absorbed = len(entries)
}

// settle brings top up to date with the groups that gained.
func (t *failTally) settle() {
	var worst int32 = -1
	if len(t.top) == MaxFailureGroups {
		worst = t.top[len(t.top)-1]
	}
	// Groups that gained and may now be among the best: those that beat
	// the worst of the best before (which only moves up).
	cands := selectBest(t.touched, MaxFailureGroups, func(a, b int32) bool { return t.groupBetter(a, b) },
		func(gi int32) bool { return !t.groups[gi].inTop && (worst < 0 || t.groupBetter(gi, worst)) })
	for _, gi := range t.touched {
		t.groups[gi].touched = false
	}
	t.touched = t.touched[:0]
	if len(cands) == 0 {
		slices.SortFunc(t.top, t.groupOrder)
		return
	}
	t.top = append(t.top, cands...)
	slices.SortFunc(t.top, t.groupOrder)
	for _, gi := range t.top[min(len(t.top), MaxFailureGroups):] {
		t.groups[gi].inTop, t.groups[gi].detail = false, nil
	}
	t.top = t.top[:min(len(t.top), MaxFailureGroups)]
	for _, gi := range t.top {
		if g := &t.groups[gi]; !g.inTop {
			g.inTop = true
			g.detail = t.buildDetail(gi)
		}
	}
}

// selectBest returns the best (at most k) of the ids that pass keep, in no
// order, looking at each once (a heap of the k best so far, worst on top).
func selectBest(ids []int32, k int, better func(a, b int32) bool, keep func(int32) bool) []int32 {
	var h []int32
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && better(h[c], h[c+1]) {
				c++ // the worse child
			}
			if !better(h[i], h[c]) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for _, id := range ids {
		if !keep(id) {
			continue
		}
		if len(h) < k {
			h = append(h, id)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !better(h[p], h[i]) {
					break
				}
				h[p], h[i] = h[i], h[p]
				i = p
			}
			continue
		}
		if better(id, h[0]) {
			h[0] = id
			down(0)
		}
	}
	return h
}

// groupOrder orders groups best first: by count (most first), first time
// (none first), pattern.
func (t *failTally) groupOrder(a, b int32) int {
	ga, gb := &t.groups[a], &t.groups[b]
	if ga.count != gb.count {
		return cmp.Compare(gb.count, ga.count)
	}
	if c := cmp.Compare(t.firstKey(ga.first), t.firstKey(gb.first)); c != 0 {
		return c
	}
	return strings.Compare(ga.pattern, gb.pattern)
}

func (t *failTally) groupBetter(a, b int32) bool { return t.groupOrder(a, b) < 0 }

func (t *failTally) firstKey(r int32) int64 {
	if r < 0 {
		return recordformat.NoTime
	}
	return t.entry(r).key
}

func (t *failTally) entry(r int32) *failEntry {
	ref := t.refs[r]
	return &t.slots[ref.slot].entries[ref.idx]
}

// refLess orders failures by time, path and line.
func (t *failTally) refLess(a, b int32) bool {
	ra, rb := t.refs[a], t.refs[b]
	return failureLess(&t.slots[ra.slot], &t.slots[ra.slot].entries[ra.idx], &t.slots[rb.slot], &t.slots[rb.slot].entries[rb.idx])
}

func failureLess(sa *failSlot, a *failEntry, sb *failSlot, b *failEntry) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	if sa != sb {
		if c := strings.Compare(sa.rel, sb.rel); c != 0 {
			return c < 0
		}
	}
	return a.rng.Start.Line < b.rng.Start.Line
}

func (t *failTally) buildDetail(gi int32) *groupDetail {
	d := &groupDetail{}
	for r := t.groups[gi].head; r >= 0; r = t.refs[r].next {
		t.addDetail(d, r)
	}
	return d
}

// addDetail adds failure r to a group's detail.
func (t *failTally) addDetail(d *groupDetail, r int32) {
	slot := &t.slots[t.refs[r].slot]
	d.agents = insertSorted(d.agents, slot.agent, strings.Compare)
	d.episodes = insertSorted(d.episodes, slot.episode, compareEpisodes)
	i, _ := slices.BinarySearchFunc(d.recs, r, func(x, y int32) int {
		if t.refLess(x, y) {
			return -1
		}
		return 1 // no two failures are equal: a file's line is one record
	})
	if i < MaxFailureRecords {
		d.recs = slices.Insert(d.recs, i, r)
		if len(d.recs) > MaxFailureRecords {
			d.recs = d.recs[:MaxFailureRecords]
		}
	}
}

func insertSorted(list []string, s string, compare func(a, b string) int) []string {
	i, found := slices.BinarySearchFunc(list, s, compare)
	if found {
		return list
	}
	return slices.Insert(list, i, s)
}

// compareEpisodes orders episode folder names numerically.
func compareEpisodes(a, b string) int {
	na, _ := EpisodeNumber(a)
	nb, _ := EpisodeNumber(b)
	if c := corpus.CompareEpisodeNumbers(na, nb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// overlayFailure is a failure of a file's last record, laid over the tally
// for one answer.
type overlayFailure struct {
	slot int32
	e    *failEntry
}

// answerGroup is a group as one answer sees it: the tally's (gi, -1 for a
// pattern only the overlay holds) and the overlay's failures of it.
type answerGroup struct {
	gi      int32
	pattern string
	count   int32
	first   failureAt // zero e: none
	over    []overlayFailure
}

type failureAt struct {
	slot *failSlot
	e    *failEntry
}

func (a failureAt) less(b failureAt) bool { return failureLess(a.slot, a.e, b.slot, b.e) }

func (t *failTally) at(r int32) failureAt {
	if r < 0 {
		return failureAt{}
	}
	ref := t.refs[r]
	return failureAt{&t.slots[ref.slot], &t.slots[ref.slot].entries[ref.idx]}
}

// answer makes the answer of the tally with overlay laid over it. The best
// groups are among top and the groups overlay adds to (which only gain).
func (t *failTally) answer(overlay []overlayFailure) FailuresResult {
	var gs []*answerGroup
	byGroup := map[int32]*answerGroup{}
	byText := map[string]*answerGroup{}
	view := func(gi int32) *answerGroup {
		g := &t.groups[gi]
		a := &answerGroup{gi: gi, pattern: g.pattern, count: g.count, first: t.at(g.first)}
		byGroup[gi] = a
		gs = append(gs, a)
		return a
	}
	for _, gi := range t.top {
		view(gi)
	}
	for _, o := range overlay {
		var a *answerGroup
		if gi, ok := t.byText[o.e.pattern]; ok {
			if a = byGroup[gi]; a == nil {
				a = view(gi)
			}
		} else if a = byText[o.e.pattern]; a == nil {
			a = &answerGroup{gi: -1, pattern: o.e.pattern}
			byText[o.e.pattern] = a
			gs = append(gs, a)
		}
		a.count++
		a.over = append(a.over, o)
		if o.e.timed {
			if f := (failureAt{&t.slots[o.slot], o.e}); a.first.e == nil || f.less(a.first) {
				a.first = f
			}
		}
	}
	slices.SortFunc(gs, func(x, y *answerGroup) int {
		if x.count != y.count {
			return cmp.Compare(y.count, x.count)
		}
		kx, ky := int64(recordformat.NoTime), int64(recordformat.NoTime)
		if x.first.e != nil {
			kx = x.first.e.key
		}
		if y.first.e != nil {
			ky = y.first.e.key
		}
		if c := cmp.Compare(kx, ky); c != 0 {
			return c
		}
		return strings.Compare(x.pattern, y.pattern)
	})
	gs = gs[:min(len(gs), MaxFailureGroups)]
	res := FailuresResult{Groups: make([]FailureGroup, len(gs))}
	for i, a := range gs {
		res.Groups[i] = t.group(a)
	}
	return res
}

// group writes one group of an answer.
func (t *failTally) group(a *answerGroup) FailureGroup {
	var d *groupDetail
	var last failureAt
	if a.gi >= 0 {
		g := &t.groups[a.gi]
		if d = g.detail; d == nil {
			d = t.buildDetail(a.gi)
		}
		last = t.at(g.last)
	}
	if d == nil {
		d = &groupDetail{}
	}
	recs := make([]failureAt, 0, min(int(a.count), MaxFailureRecords))
	for _, r := range d.recs {
		recs = append(recs, t.at(r))
	}
	// The answer is kept: it shares nothing with the tally, which changes.
	agents, episodes := slices.Clone(d.agents), slices.Clone(d.episodes)
	if len(a.over) > 0 {
		for _, o := range a.over {
			f := failureAt{&t.slots[o.slot], o.e}
			agents = insertSorted(agents, f.slot.agent, strings.Compare)
			episodes = insertSorted(episodes, f.slot.episode, compareEpisodes)
			recs = append(recs, f)
			if o.e.timed && (last.e == nil || last.less(f)) {
				last = f
			}
		}
		slices.SortFunc(recs, func(x, y failureAt) int {
			if x.less(y) {
				return -1
			}
			return 1
		})
		recs = recs[:min(len(recs), MaxFailureRecords)]
	}
	out := FailureGroup{Pattern: a.pattern, Count: int(a.count), Agents: agents, Episodes: episodes,
		First: timeOf(a.first), Last: timeOf(last),
		Records: make([]Location, len(recs)), Paths: make([]string, len(recs))}
	for j, f := range recs {
		out.Records[j] = Location{URI: f.slot.uri, Range: f.e.rng}
		out.Paths[j] = f.slot.path
	}
	return out
}

// timeOf is a failure's time as written, nil for none.
func timeOf(f failureAt) *string {
	if f.e == nil {
		return nil
	}
	s := records.FormatTimeKey(f.e.key, f.e.dotMillis)
	return &s
}
