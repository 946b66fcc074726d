package retriever

import "runls/retriever/internal/bm25"

// The numbers of the spec, in one place.
const (
	// MaxPieceChars is the most UTF-16 code units a piece holds (spec §4).
	MaxPieceChars = 2000
	// BinarySniffBytes is how much of a file's head is checked for a NUL byte (spec §1).
	BinarySniffBytes = 8 << 10
	// ReadBlockBytes is the most a file is read in one block (spec §7).
	ReadBlockBytes = 1 << 20
	// BM25 parameters, Lucene's (spec §6).
	K1 = bm25.K1
	B  = bm25.B

	// DefaultTopK and MaxTopK bound a request's topK (spec §5).
	DefaultTopK = 5
	MaxTopK     = 1000
	// DefaultSymbolLimit is how many workspace symbols are given (spec §9).
	DefaultSymbolLimit = 100
	// DefaultMaxDiagnostics caps each file's diagnostics (spec §9).
	DefaultMaxDiagnostics = 200
	// DefaultRecordsLimit and MaxRecordsLimit bound a run/records page (spec §13).
	DefaultRecordsLimit = 1000
	MaxRecordsLimit     = 10000
	// MaxQueryTerms caps the distinct terms of a query: more is rejected.
	MaxQueryTerms = 1024
)
