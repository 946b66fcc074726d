// Package retriever is the engine of runls: it finds the agent files of a run
// folder, follows them as they grow, indexes every line of them, and answers
// BM25-ranked searches for evidence (spec §1-§8). The command line and the
// language server both call it; it knows nothing of either.
package retriever

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"runls/internal/store"
	"runls/masking"
)

// Options configure an Index.
type Options struct {
	// Root is the run folder. Its real path is taken (a link is followed).
	Root string
	// Interpreter tells what records mean; nil: every record is a note.
	Interpreter *Interpreter
	// Masker hides text before it is indexed; nil: masking is off.
	Masker masking.Masker
	// Logger receives the WARNs of spec §1 and §5; nil: nothing is logged.
	Logger *zap.Logger
	// MaxDiagnosticsPerFile caps each file's diagnostics; 0: DefaultMaxDiagnostics.
	MaxDiagnosticsPerFile int
	// Cache is where the index of the run is kept between opens (spec §15);
	// its zero value keeps it nowhere.
	Cache CacheOptions
	// BoundMemory lets the index set the process's Go memory limit from the
	// run's size for its first indexing and give the heap's free pages back
	// after it (internal/persist/memory.go): for a program that holds one index.
	BoundMemory bool
	// OneShot is for a command that opens the run, answers and exits (runls
	// search, records, failures, check): Open starts the walk of the run
	// beside the cache entry's restore, which the first update takes as its
	// discovery (index.go: a reopen's 100,000 files answered some 0.1 s
	// sooner), and the first update gives no free pages back to the kernel
	// (BoundMemory), which only delayed the process's end. A change made
	// between Open and the first Refresh may then be seen by the next
	// update only: for a command, both are the one request.
	OneShot bool

	cacheDelay time.Duration // tests: the cache writer's debounce; 0: cacheWriteDelay
	flushDocs  int           // tests: the fewest pieces of a segment flushed as it is made; 0: flushMinDocs
	listed     func(string)  // tests: runfs.Discovery.Listed, set before Open walks (OneShot)
}

// CacheOptions say where the persisted index lives (spec §15).
type CacheOptions struct {
	// Root is the cache folder; nil: no cache (--no-cache).
	Root *store.Root
	// MaxBytes bounds the whole cache folder (--cache-max); 0: no bound.
	MaxBytes int64
}

// Request is a search request (spec §5). Empty strings and a zero TopK are the
// same as absent fields.
type Request struct {
	TurnMessage  string `json:"turnMessage,omitempty"`
	Query        string `json:"query,omitempty"`
	Agent        string `json:"agent,omitempty"`
	Episode      string `json:"episode,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	Scope        string `json:"scope,omitempty"`
	TopK         int    `json:"topK,omitempty"`
	// From and To bound the records' time (spec §5, revision 3:
	// `yyyy-MM-dd HH:mm:ss`, inclusive, to the second); with either, records
	// and lines without a time (plain files among them) are left out.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// AllConversations makes the records of the current episode evidence
	// whatever conversation they were written in (unfielded ones still are
	// not): the widening an editor offers when a result says that evidence
	// of other conversations was hidden. runls' own, beside spec §5.
	AllConversations bool `json:"allConversations,omitempty"`
}

// FieldError rejects a request field, naming the field and its value.
type FieldError struct {
	Field  string
	Value  string
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Field, e.Value, e.Reason)
}

// Result is the answer to a search: the run/search result shape of spec §9.
// Hidden and Notices are a search's (spec §12); workspace symbols have none.
type Result struct {
	Items   []Item   `json:"items"`
	Hidden  Hidden   `json:"hidden"`
	Notices []Notice `json:"notices"`
}

// Hidden counts the pieces that the same request would have returned with
// rules 1-4 of spec §5 lifted, and that those rules kept out of the result
// (texts the result holds aside), each under the first reason that applies
// (spec §12).
type Hidden struct {
	Scope             int `json:"scope,omitempty"`
	NoContext         int `json:"noContext,omitempty"`
	Unfielded         int `json:"unfielded,omitempty"`
	OtherConversation int `json:"otherConversation,omitempty"`
}

// Total is how many pieces were hidden.
func (h Hidden) Total() int { return h.Scope + h.NoContext + h.Unfielded + h.OtherConversation }

// Notice says that the run holds no such value as a request field names
// (spec §12); the search is made as asked all the same.
type Notice struct {
	Field   string `json:"field"`
	Value   string `json:"value"`
	Message string `json:"message"`
	// Suggestion is the value the run has that was probably meant (an
	// agent whose name differs only in case), or nil.
	Suggestion *string `json:"suggestion"`
}

// Reading is what a record means (spec §3).
type Reading string

const (
	ReadingNote    Reading = "note"
	ReadingTold    Reading = "told"
	ReadingSaid    Reading = "said"
	ReadingLeftOut Reading = "leftOut"
)

// Item is one piece of evidence.
type Item struct {
	Location     Location `json:"location"`
	Score        float64  `json:"score"`
	Text         string   `json:"text"`
	Agent        string   `json:"agent"`
	Episode      string   `json:"episode"`
	Conversation *string  `json:"conversation"`
	Reading      Reading  `json:"reading"`
	// Time is the record's `<date> <time>` as written and Level its level
	// (log files only); nil for plain files and a line before a file's
	// first record.
	Time  *string `json:"time"`
	Level *string `json:"level"`
	// Matches are the UTF-16 ranges [start, end) within Text of every
	// occurrence of a term of the query that ranked the request, in order.
	Matches [][2]int `json:"matches"`

	// Path is the file's absolute path, and File its path relative to the run folder.
	Path string `json:"-"`
	File string `json:"-"`
	// ByteStart and ByteEnd are the piece's byte columns in its line (0-based).
	ByteStart int `json:"-"`
	ByteEnd   int `json:"-"`
}

// Location is a file URI and a range in UTF-16 code units, as LSP writes it.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// Range is a start and end position.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Position is a 0-based line and a 0-based UTF-16 character offset.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Info is what the run holds (the run/info result of spec §9).
type Info struct {
	Root     string        `json:"root"`
	Agents   []string      `json:"agents"`
	Episodes []EpisodeInfo `json:"episodes"`
	Indexing IndexingInfo  `json:"indexing"`
}

// EpisodeInfo lists an episode's agents and the conversation ids written in it.
type EpisodeInfo struct {
	Episode       string   `json:"episode"`
	Agents        []string `json:"agents"`
	Conversations []string `json:"conversations"`
}

// IndexingInfo tells how far indexing is.
type IndexingInfo struct {
	Done  bool  `json:"done"`
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

// Progress reports indexing progress during Refresh.
type Progress struct {
	FilesDone, FilesTotal int
	BytesDone, BytesTotal int64
}

// Changes lists the record files (absolute paths) whose diagnostics may have
// changed in a Refresh, deleted ones included.
type Changes struct {
	Files []string
}

// Diagnostic codes (spec §9).
const (
	CodeUnfieldedLine          = "unfielded-line"
	CodeUnindentedContinuation = "unindented-continuation"
	CodeMore                   = "more-warnings"
	// CodeForeignLayout is a foreign log's one diagnostic (spec §2, §9).
	CodeForeignLayout = "foreign-layout"
)

// DiagnosticCodes are the codes a diagnostic may have, for settings and
// flags that name them.
var DiagnosticCodes = []string{CodeUnindentedContinuation, CodeUnfieldedLine, CodeMore, CodeForeignLayout}

// Severity is how serious a diagnostic is, numbered as LSP numbers it.
type Severity int

const (
	SeverityWarning     Severity = 2
	SeverityInformation Severity = 3
	SeverityHint        Severity = 4
)

// Diagnostic is a format warning of a record file (spec §9), over a record,
// part of one or a run of them. Every range starts at the start of a line.
type Diagnostic struct {
	Range    Range
	Severity Severity
	Code     string
	Message  string
}

// Uncapped, as Diagnostics' max, gives every diagnostic of a file.
const Uncapped = -1
