package fleet

// This file holds the seam between runls' rules and a shared store: what an
// entry is, and the three things asked of a store (take entries, give the
// statistics of a search, give its candidates), with the bookkeeping that
// shipping again needs.

import (
	"context"
	"time"

	"runls/retriever"
)

// Entry is one shipped record (spec §16).
type Entry struct {
	Run, Episode, Agent string
	Path                string // relative to the run folder, slash-separated
	Line                uint32 // 0-based
	Offset              int64
	RecordID            string
	Time                time.Time
	TimeText            string // as written; "" without one
	Level, State        string
	Conversation        *string
	Reading             retriever.Reading
	RecordFile          bool // of a record file: rules 2-4 of spec §5 apply
	Unfielded           bool
	Text                string
	Terms               string // the distinct terms of its pieces, one space apart
	// PieceTerms, for a record of several pieces, are each piece's
	// distinct terms (a space apart), pieces a '\n' apart; not stored.
	PieceTerms string
	Tokens     int
	Pieces     []retriever.ShipPiece
}

// Scope is what a search looks at: the runs named (none: every run) and
// the agent searched (none: every agent). Statistics are over it.
type Scope struct {
	Runs  []string
	Agent string
}

// Rules are the evidence rules of a request (spec §5, rules 1-4) for the
// store to apply as filters.
type Rules struct {
	Episode          string // the request's current episode (episode-N)
	Conversation     string
	ScopeEpisode     bool
	AllConversations bool
}

// StatsQuery asks for a search's statistics and facts in one round trip.
type StatsQuery struct {
	Scope Scope
	Terms []string
	Rules Rules
	// Agent, Episode and Conversation are the request's values whose
	// presence in the runs searched is asked (spec §12's notices).
	Agent, Episode, Conversation string
}

// Stats answers a StatsQuery, from the tallies the store holds beside the
// records (no record is read).
type Stats struct {
	Pieces, Tokens int64   // over the scope
	DF             []int64 // by term: pieces of the scope holding it, n(t)
	// ByRun are the runs holding a term, with their DF: the candidates
	// are in these runs only.
	ByRun map[string][]int64
	// HasAgent, HasEpisode, HasConversation: the runs searched hold a
	// record of that agent (any), of that episode, of that conversation
	// in that episode.
	HasAgent, HasEpisode, HasConversation bool
	// Partial is the cause, when the store answered for part of its data.
	Partial string
}

// CandidateQuery asks for the records of the scope holding any of Terms
// (with Rules applied when Filtered), none of Without, at most Limit.
type CandidateQuery struct {
	Scope    Scope
	Terms    []string
	Without  []string
	Rules    Rules
	Filtered bool
	Limit    int
}

// Held is what the store holds of a run.
type Held struct {
	Records, Unique int64 // entries, distinct record ids
	Tallied         int64 // records its tallies count
}

// Batch is what one Ship sends: entries of one run, then their tally. The
// store takes the tally last, so that a tally held means its batch is.
type Batch struct {
	Run     string
	ID      string // unique to the batch: its tally is asked for by it
	Entries []Entry
	Tally   *Tally
}

// Store is a shared store of shipped runs.
type Store interface {
	// Ship stores a batch; when it returns nil the store has taken it. It
	// keeps nothing of b: the shipper reuses it.
	Ship(ctx context.Context, b Batch) error
	// Tallied reports whether the store holds the tally of batch id of a
	// run (and so the whole batch).
	Tallied(ctx context.Context, run, id string) (bool, error)
	// Statistics answers a search's statistics and facts.
	Statistics(ctx context.Context, q StatsQuery) (Stats, error)
	// Candidates returns the records a search ranks, and the cause when
	// the store answered for part of its data.
	Candidates(ctx context.Context, q CandidateQuery) (entries []Entry, partial string, err error)
	// Held counts what the store holds of each run named.
	Held(ctx context.Context, runs []string) (map[string]Held, error)
	// RecordIDs lists the record ids the store holds of a run's file from
	// offset on.
	RecordIDs(ctx context.Context, run, path string, offset int64) (map[string]bool, error)
	// Paths lists the files of a run the store holds records of.
	Paths(ctx context.Context, run string) (map[string]bool, error)
	// Agents lists the agents of the runs searched.
	Agents(ctx context.Context, runs []string) ([]string, error)
}
