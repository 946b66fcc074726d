package retriever

import (
	"context"
	"errors"
)

// Interpreter is a configured record interpreter: rules tried in order (spec §3).
type Interpreter struct{}

// ParseInterpreter loads rules from JSON ({"rules": [...]}); a bad rule is an error naming it.
func ParseInterpreter(data []byte) (*Interpreter, error) { return nil, errNotYet }

// Index follows and indexes one run folder. It is safe for concurrent use.
type Index struct{ root string }

var errNotYet = errors.New("retriever: not built yet")

// Open resolves the run folder's real path and checks that it is a folder.
// It reads no file: the first Refresh or Search indexes.
func Open(ctx context.Context, opts Options) (*Index, error) { return nil, errNotYet }

// Root is the real path of the run folder.
func (ix *Index) Root() string { return ix.root }

// IsRunFolder reports whether the root holds at least one episode-N folder.
func (ix *Index) IsRunFolder() bool { return false }

// Refresh brings the index up to date with the files, reporting progress.
func (ix *Index) Refresh(ctx context.Context, progress func(Progress)) (Changes, error) {
	return Changes{}, errNotYet
}

// Search refreshes, then answers a request (spec §5, §6).
func (ix *Index) Search(ctx context.Context, req Request) (Result, error) {
	return Result{}, errNotYet
}

// Symbols ranks query against every indexed piece with no episode or
// conversation filter (spec §9 workspace/symbol); at most limit items (0: 100).
func (ix *Index) Symbols(ctx context.Context, query string, limit int) (Result, error) {
	return Result{}, errNotYet
}

// Info tells what the run holds.
func (ix *Index) Info(ctx context.Context) (Info, error) { return Info{}, errNotYet }

// RecordFiles lists the absolute paths of the run's record files.
func (ix *Index) RecordFiles() []string { return nil }

// Diagnostics returns the format warnings of one record file, capped at max
// (0: the index's MaxDiagnosticsPerFile), the last saying how many more there are.
func (ix *Index) Diagnostics(path string, max int) []Diagnostic { return nil }

// Watch keeps the index current with file-system events until ctx ends,
// calling onChange after each update that changed files.
func (ix *Index) Watch(ctx context.Context, onChange func(Changes)) error { return errNotYet }

// Close releases the index's watchers.
func (ix *Index) Close() error { return nil }

// FileURI writes a file URI the way VS Code writes it (":" and "@" percent-encoded).
func FileURI(path string) string { return "file://" + path }

// Validate checks a request's fields (spec §5), returning a *FieldError.
func (r Request) Validate() error { return nil }
