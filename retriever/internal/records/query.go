package records

import "runls/recordformat"

// Query is a run/records request as the merge reads it: checked and
// parsed by the retriever, which knows the request's fields and their
// errors.
type Query struct {
	EpNum    string // the episode's number, as the retriever's EpisodeNumber gives it
	Conv     string
	HasConv  bool
	Agent    string
	MinLevel recordformat.Level // None: every level
	Window   bool               // From or To given: records without a time are left out
	From, To int64              // inclusive bounds on time keys
	Limit    int
	After    *Pos // the cursor's place
	Before   *Pos // a previous cursor's place: the page ends just before it
	Lines    bool // the lines as written are asked for too
	FP       uint64
}

// NoLaterBound is the To of a request without one.
const NoLaterBound = 1<<63 - 1

// SecondKeys is how many time keys one second has (recordformat.TimeKey).
const SecondKeys = 1024
