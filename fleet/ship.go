package fleet

// This file holds shipping a run (spec §16 `runls ship`): its records read
// with the index's rules, sent in batches, the offsets shipped kept beside
// the cache entry so that shipping again sends only what the store does not
// hold, and --follow.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"runls/retriever"
)

// ShipOptions say how to ship a run.
type ShipOptions struct {
	// Run is the run's id in the store.
	Run string
	// StateFile keeps the offsets shipped; "": none (shipping again then
	// asks the store what it holds).
	StateFile string
	// Follow keeps shipping as the run grows, every Interval, until ctx ends.
	Follow   bool
	Interval time.Duration
	// BatchBytes bounds a batch's evidence text; 0: 4 MiB.
	BatchBytes int
	// Progress is told after each batch the store took; nil: nothing.
	Progress func(Summary)
	// Settle is how long after a batch was sent by a shipper that stopped
	// the store may still take or hide part of it (VictoriaLogs, unflushed:
	// up to two seconds); 0: 3 s.
	Settle time.Duration
	// Unshipped says the caller asked the store, after a flush, and it
	// holds nothing of the run: without a state file the store is not
	// asked again (a ship of many runs asks once for all).
	Unshipped bool
}

// Summary says what a ship did.
type Summary struct {
	Run      string
	Records  int64 // records sent now
	Held     int64 // records of the run shipped in all (the store should hold them)
	Bytes    int64 // bytes of the run's files read
	Text     int64 // bytes of evidence text sent
	Batches  int
	Duration time.Duration
}

// Ship sends the records of the run ix follows that the store does not
// hold yet; with Follow it keeps doing so until ctx ends (then it returns
// ctx's error only if nothing could be shipped).
func Ship(ctx context.Context, st Store, ix *retriever.Index, opts ShipOptions) (Summary, error) {
	if opts.Interval <= 0 {
		opts.Interval = 200 * time.Millisecond
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = 4 << 20
	}
	if opts.Settle <= 0 {
		opts.Settle = 3 * time.Second
	}
	start := time.Now()
	s := &shipper{st: st, ix: ix, opts: opts, sum: Summary{Run: opts.Run}}
	if err := s.load(ctx); err != nil {
		return s.sum, err
	}
	for {
		err := s.pass(ctx)
		if err == nil && !s.flushDue.IsZero() && !time.Now().Before(s.flushDue) {
			s.flushNow(ctx)
		}
		s.sum.Duration = time.Since(start)
		if err != nil {
			if opts.Follow && ctx.Err() != nil {
				return s.sum, nil
			}
			return s.sum, err
		}
		if !opts.Follow {
			return s.sum, nil
		}
		select {
		case <-ctx.Done():
			s.sum.Duration = time.Since(start)
			return s.sum, nil
		case <-time.After(opts.Interval):
		}
	}
}

// CheckHeld waits (up to timeout) until the store holds every record
// shipped of each run (want), and fails naming what it lacks: records the
// store took and dropped (retention) are never a silent loss. A record
// held twice is an error too.
func CheckHeld(ctx context.Context, st Store, want map[string]int64, timeout time.Duration) error {
	runs := make([]string, 0, len(want))
	for r := range want {
		runs = append(runs, r)
	}
	deadline := time.Now().Add(timeout)
	flush(ctx, st)
	for {
		held, err := st.Held(ctx, runs)
		if err != nil {
			return err
		}
		var short []string
		for _, r := range runs {
			h := held[r]
			if h.Records > h.Unique {
				return fmt.Errorf("the store holds %d entries of run %s for %d records: %d held twice", h.Records, r, h.Unique, h.Records-h.Unique)
			}
			if h.Unique < want[r] {
				short = append(short, fmt.Sprintf("%d of %d records of run %s", h.Unique, want[r], r))
			}
		}
		if len(short) == 0 {
			for _, r := range runs {
				if h := held[r]; h.Tallied != h.Records {
					return fmt.Errorf("the store's tallies of run %s count %d records, it holds %d: a search's statistics of it are off (the run was shipped by a runls without tallies, or a shipper without its offsets file stopped mid-batch: ship it under a new --run-id)", r, h.Tallied, h.Records)
				}
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the store holds only %v after %s: it took and dropped the rest (records older than its retention, -retentionPeriod, 7 days by default, or more than 2 days ahead, -futureRetention)", short, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Unshipped reports, of the runs named, those the store holds no record
// of (after a flush: what a shipper that stopped sent is counted).
func Unshipped(ctx context.Context, st Store, runs []string) (map[string]bool, error) {
	flush(ctx, st)
	held, err := st.Held(ctx, runs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(runs))
	for _, r := range runs {
		out[r] = held[r].Records == 0
	}
	return out, nil
}

// Flusher is a store that can make what it took searchable at once.
type Flusher interface {
	Flush(ctx context.Context) error
}

// flush makes what st took searchable, where it can; where it cannot, the
// callers wait or poll.
func flush(ctx context.Context, st Store) bool {
	f, ok := st.(Flusher)
	return ok && f.Flush(ctx) == nil
}

// settle waits until what the store took by at is searchable: a store
// still reads a request its sender left (killed) for a moment, and makes
// what it read searchable a second or two later unless flushed.
func settle(ctx context.Context, st Store, at time.Time) error {
	if wait := time.Until(at); wait > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	flush(ctx, st)
	return nil
}

// StateFile is where the offsets shipped of a run folder (its real path),
// under a run id, to a store, are kept in the cache folder dir.
func StateFile(dir, store, run, root string, config string) string {
	h := fnv.New128a()
	for _, s := range []string{store, run, root, config} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return filepath.Join(dir, "fleet", fmt.Sprintf("%x.json", h.Sum(nil)))
}

// shipState is the state file: per file, its identity and position.
type shipState struct {
	Files map[string]*fileShip `json:"files"`
	// Inflight are the files with records sent but not known taken, at
	// their positions (and counts) before them; At is when. Batch is the
	// batch in flight, From the offset of its first record of each file:
	// records the store holds from there on are in its tally only if the
	// store holds the tally.
	Inflight map[string]fileMark `json:"inflight,omitempty"`
	At       time.Time           `json:"at"`
	Batch    string              `json:"batch,omitempty"`
	From     map[string]int64    `json:"from,omitempty"`
	Gone     int64               `json:"gone"` // records of files replaced or deleted
}

// fileMark is a file's position and records shipped before a batch.
type fileMark struct {
	Pos     retriever.ShipPos `json:"pos"`
	Records int64             `json:"records"`
}

type fileShip struct {
	Dev     uint64            `json:"dev"`
	Ino     uint64            `json:"ino"`
	Size    int64             `json:"size"` // the size read
	Pos     retriever.ShipPos `json:"pos"`
	Records int64             `json:"records"`
}

type shipper struct {
	st   Store
	ix   *retriever.Index
	opts ShipOptions
	sum  Summary

	state shipState
	// held are the record ids the store holds of a file beyond its
	// position (after a crash, or without a state file): not sent again.
	held map[string]map[string]bool
	// untallied are, for files of a batch in flight whose tally the store
	// does not hold, the offset its records start at: held records from
	// there on are counted in the next tally.
	untallied map[string]int64

	// lastFlush is when --follow last asked the store to make what it
	// took searchable; flushDue, when it asks next (zero: nothing waits).
	lastFlush, flushDue time.Time

	batch     []Entry
	batchText int
	tally     Tally
	batches   int
	from      map[string]int64     // the batch's first offset of each file
	perFile   map[string]int64     // records of each file in the batch
	pending   map[string]fileMark  // files read in part or not settled, at their old positions
	done      map[string]*fileShip // files read whole, to settle at the next flush
}

// load reads the state file; records in flight when a shipper stopped, and
// a run shipped without a state file, are asked of the store.
func (s *shipper) load(ctx context.Context) error {
	s.held, s.untallied, s.from = map[string]map[string]bool{}, map[string]int64{}, map[string]int64{}
	s.perFile, s.pending, s.done = map[string]int64{}, map[string]fileMark{}, map[string]*fileShip{}
	s.state = shipState{Files: map[string]*fileShip{}}
	if s.opts.StateFile != "" {
		b, err := os.ReadFile(s.opts.StateFile)
		switch {
		case err == nil:
			if err := json.Unmarshal(b, &s.state); err != nil {
				s.state = shipState{Files: map[string]*fileShip{}}
			} else {
				if s.state.Files == nil {
					s.state.Files = map[string]*fileShip{}
				}
				return s.recover(ctx)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("ship: the offsets shipped: %w", err)
		}
	}
	// No state: what the store holds of the run is not sent again.
	if s.opts.Unshipped {
		return nil
	}
	flush(ctx, s.st)
	paths, err := s.st.Paths(ctx, s.opts.Run)
	if err != nil {
		return err
	}
	for p := range paths {
		ids, err := s.st.RecordIDs(ctx, s.opts.Run, p, 0)
		if err != nil {
			return err
		}
		s.held[p] = ids
	}
	return nil
}

// recover asks the store which records of the batch in flight it took.
func (s *shipper) recover(ctx context.Context) error {
	if len(s.state.Inflight) == 0 {
		return nil
	}
	if err := settle(ctx, s.st, s.state.At.Add(s.opts.Settle)); err != nil {
		return err
	}
	tallied := true
	if s.state.Batch != "" {
		var err error
		if tallied, err = s.st.Tallied(ctx, s.opts.Run, s.state.Batch); err != nil {
			return err
		}
	}
	held, err := s.heldSettled(ctx)
	if err != nil {
		return err
	}
	for p, m := range s.state.Inflight {
		if from, ok := s.state.From[p]; ok && !tallied {
			s.untallied[p] = from
		}
		s.held[p] = held[p]
		if f := s.state.Files[p]; f != nil {
			f.Pos, f.Records, f.Size = m.Pos, m.Records, -1
		}
	}
	s.state.Inflight, s.state.Batch, s.state.From = nil, "", nil
	return nil
}

// settleRounds bounds how many times recover asks the store again while
// what it holds of the batch in flight still grows, a settleEvery apart.
// A loaded machine's front node can still be reading a killed shipper's
// request seconds after Settle has passed (TestShipKilled held 383
// records twice at load 20 when recover asked once): asking until two
// answers agree sends again only what the store never took. settleEvery
// is longer than the front node's own buffer (a fixed one-second timer,
// which a flush does not reach), so a request still being read shows
// between two answers.
const (
	settleRounds = 20
	settleEvery  = 2 * time.Second
)

// heldSettled lists, per file in flight, the record ids the store holds
// from the file's old position on, once two answers a settleEvery apart
// agree (or after settleRounds, with the last answer).
func (s *shipper) heldSettled(ctx context.Context) (map[string]map[string]bool, error) {
	var last map[string]map[string]bool
	for round := 0; round < settleRounds; round++ {
		if round > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(settleEvery):
			}
			flush(ctx, s.st)
		}
		held := make(map[string]map[string]bool, len(s.state.Inflight))
		for p, m := range s.state.Inflight {
			ids, err := s.st.RecordIDs(ctx, s.opts.Run, p, m.Pos.Offset)
			if err != nil {
				return nil, err
			}
			held[p] = ids
		}
		if last != nil && sameCounts(last, held) {
			return held, nil
		}
		last = held
	}
	return last, nil
}

// sameCounts says whether a and b hold as many ids for each file: ids are
// only ever added, so equal counts are equal sets.
func sameCounts(a, b map[string]map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for p, ids := range a {
		if len(b[p]) != len(ids) {
			return false
		}
	}
	return true
}

// pass ships what the run holds beyond each file's position.
func (s *shipper) pass(ctx context.Context) error {
	files, err := s.ix.ShipFiles(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, f := range files {
		seen[f.Path] = true
		fsh := s.state.Files[f.Path]
		if fsh != nil && (fsh.Dev != f.Dev || fsh.Ino != f.Ino || f.Size < fsh.Size) {
			s.state.Gone += fsh.Records // replaced or rewritten: read again as new
			fsh = nil
		}
		if fsh == nil {
			fsh = &fileShip{Dev: f.Dev, Ino: f.Ino}
			s.state.Files[f.Path] = fsh
		} else if f.Size == fsh.Size {
			continue
		}
		if err := s.file(ctx, f, fsh); err != nil {
			return err
		}
	}
	for p, f := range s.state.Files {
		if !seen[p] {
			s.state.Gone += f.Records
			delete(s.state.Files, p)
		}
	}
	if err := s.flush(ctx); err != nil {
		return err
	}
	s.sum.Held = s.state.Gone
	for _, f := range s.state.Files {
		s.sum.Held += f.Records
	}
	return nil
}

// file reads one file from its position into batches.
func (s *shipper) file(ctx context.Context, f retriever.ShipFile, fsh *fileShip) error {
	if _, ok := s.pending[f.Path]; !ok {
		s.pending[f.Path] = fileMark{Pos: fsh.Pos, Records: fsh.Records}
	}
	key := fileKey(s.opts.Run, f.Path, f.Dev, f.Ino)
	held := s.held[f.Path]
	untallied, inflight := s.untallied[f.Path]
	next, err := s.ix.ReadShip(ctx, f, fsh.Pos, s.opts.Follow, func(r retriever.ShipRecord) error {
		id := strconv.FormatUint(key, 16) + "-" + strconv.FormatInt(r.Offset, 10)
		if held[id] {
			s.perFile[f.Path]++ // the store holds it already
			if inflight && r.Offset >= untallied {
				if _, ok := s.from[f.Path]; !ok {
					s.from[f.Path] = r.Offset
				}
				e := entryOfRecord(s.opts.Run, f, id, r)
				s.tally.Add(&e) // but no tally of it
			}
			return nil
		}
		if _, ok := s.from[f.Path]; !ok {
			s.from[f.Path] = r.Offset // the first record this batch tallies
		}
		s.batch = append(s.batch, entryOfRecord(s.opts.Run, f, id, r))
		s.tally.Add(&s.batch[len(s.batch)-1])
		s.perFile[f.Path]++
		s.batchText += len(r.Text)
		if s.batchText >= s.opts.BatchBytes {
			return s.flush(ctx)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.sum.Bytes += f.Size - max(fsh.Size, 0)
	s.done[f.Path] = &fileShip{Dev: f.Dev, Ino: f.Ino, Size: f.Size, Pos: next}
	delete(s.held, f.Path)
	delete(s.untallied, f.Path)
	return nil
}

// flush sends the batch: the state says it is in flight before, and
// settles the files read whole after the store took it.
func (s *shipper) flush(ctx context.Context) error {
	if len(s.batch) > 0 || !s.tally.Empty() {
		s.batches++
		id := fmt.Sprintf("%x-%d", time.Now().UnixNano(), s.batches)
		s.state.Inflight, s.state.At, s.state.Batch, s.state.From = s.pending, time.Now(), id, s.from
		if err := s.save(); err != nil {
			return err
		}
		b := Batch{Run: s.opts.Run, ID: id, Entries: s.batch}
		if !s.tally.Empty() {
			b.Tally = &s.tally // Ship is done with it when it returns
		}
		if err := s.st.Ship(ctx, b); err != nil {
			return err
		}
		if s.opts.Follow {
			s.flushSoon(ctx)
		}
		s.sum.Records += int64(len(s.batch))
		s.sum.Text += int64(s.batchText)
		s.sum.Batches++
	}
	changed := len(s.batch) > 0 || !s.tally.Empty() || len(s.done) > 0
	for p, n := range s.perFile {
		if f := s.state.Files[p]; f != nil {
			f.Records += n
		}
	}
	for p, d := range s.done {
		f := s.state.Files[p]
		if f != nil {
			f.Dev, f.Ino, f.Size, f.Pos = d.Dev, d.Ino, d.Size, d.Pos
		}
		delete(s.pending, p)
	}
	s.batch, s.batchText = s.batch[:0], 0
	s.tally.Reset()
	s.from = map[string]int64{}
	clear(s.perFile)
	clear(s.done)
	if !changed {
		return nil
	}
	s.state.Inflight, s.state.Batch, s.state.From = s.pending, "", nil
	if len(s.pending) == 0 {
		s.state.Inflight = nil
	}
	if err := s.save(); err != nil {
		return err
	}
	if s.opts.Progress != nil {
		s.opts.Progress(s.sum)
	}
	return nil
}

// followFlushEvery bounds how often --follow asks the store to make what
// it took searchable. VictoriaLogs holds new rows a second in its front
// and a second in its storage nodes (fixed timers); its force_flush turns
// them into small parts at once, which its docs advise against doing
// often (CPU, merges): at most once a second, and within a second of
// each batch, appends are searchable in about a second at worst.
const followFlushEvery = time.Second

// flushSoon has the store make a batch just taken searchable: now, or when
// a second has passed since the last time.
func (s *shipper) flushSoon(ctx context.Context) {
	if time.Since(s.lastFlush) >= followFlushEvery {
		s.flushNow(ctx)
		return
	}
	if s.flushDue.IsZero() {
		s.flushDue = s.lastFlush.Add(followFlushEvery)
	}
}

func (s *shipper) flushNow(ctx context.Context) {
	flush(ctx, s.st)
	s.lastFlush, s.flushDue = time.Now(), time.Time{}
}

// save writes the state file whole (a new file renamed over the old).
func (s *shipper) save() error {
	if s.opts.StateFile == "" {
		return nil
	}
	b, err := json.Marshal(&s.state)
	if err != nil {
		return fmt.Errorf("ship: the offsets shipped: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.opts.StateFile), 0o700); err != nil {
		return fmt.Errorf("ship: the offsets shipped: %w", err)
	}
	tmp := s.opts.StateFile + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("ship: the offsets shipped: %w", err)
	}
	if err := os.Rename(tmp, s.opts.StateFile); err != nil {
		return fmt.Errorf("ship: the offsets shipped: %w", err)
	}
	return nil
}

// fileKey is the hash of a run's file and its identity.
func fileKey(run, path string, dev, ino uint64) uint64 {
	h := fnv.New64a()
	h.Write([]byte(run))
	h.Write([]byte{0})
	h.Write([]byte(path))
	var b [16]byte
	for i := range 8 {
		b[i], b[8+i] = byte(dev>>(8*i)), byte(ino>>(8*i))
	}
	h.Write(b[:])
	return h.Sum64()
}

// entryOfRecord makes the entry of a shipped record.
func entryOfRecord(run string, f retriever.ShipFile, id string, r retriever.ShipRecord) Entry {
	e := Entry{
		Run: run, Episode: f.Episode, Agent: f.Agent, Path: f.Path, Line: r.Line, Offset: r.Offset,
		RecordID: id, TimeText: r.Time, Level: r.Level, State: r.State, Conversation: r.Conversation,
		Reading: r.Reading, RecordFile: f.Records && !r.Foreign, Unfielded: r.Unfielded, Text: r.Text, Terms: r.Distinct, PieceTerms: r.PieceTerms,
		Tokens: r.Terms, Pieces: r.Pieces, Time: f.ModTime,
	}
	if t, ok := parseRecordTime(r.Time); ok {
		e.Time = t
	}
	return e
}

// parseRecordTime reads `yyyy-MM-dd HH:mm:ss[,SSS|.SSS]` as UTC. A time
// without its year (syslog, logcat: the year 0000) is none: the store
// would drop it as older than any retention.
func parseRecordTime(s string) (time.Time, bool) {
	if len(s) < 19 {
		return time.Time{}, false
	}
	t, err := time.Parse("2006-01-02 15:04:05", s[:19])
	if err != nil || t.Year() < 1971 {
		return time.Time{}, false
	}
	if len(s) == 23 {
		if ms, err := strconv.Atoi(s[20:]); err == nil {
			t = t.Add(time.Duration(ms) * time.Millisecond)
		}
	}
	return t, true
}
