// This file holds the store's errors and the Report of what an open dropped
// or mended, one value the caller turns into one WARN.

package store

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrCorrupt: a file of the entry is not what its manifest says
	// (checksum, length, framing, a fault on a mapped page).
	ErrCorrupt = errors.New("corrupt")
	// ErrFormat: a file written by another format version.
	ErrFormat = errors.New("other format")
	// ErrReadOnly: a write on an entry opened while another process writes it.
	ErrReadOnly = errors.New("store: entry is read-only: another process writes it")
	// ErrUnsafe: a cache folder another user owns; the cache is not used.
	ErrUnsafe = errors.New("store: unsafe cache folder")

	errTruncated = fmt.Errorf("%w: truncated", ErrCorrupt)
	errMissing   = fmt.Errorf("%w: missing", ErrCorrupt)
)

// Report says what opening an entry dropped or mended. Its Error is one
// line for one WARN; errors.Is(r, ErrCorrupt) tells that a commit was lost.
type Report struct {
	Entry string // the entry's folder
	Items []Item
}

// Item is one file dropped or mended, and why.
type Item struct {
	File   string // name inside the entry's folder ("manifest", "b-….blob", …), or the folder
	Action string // "dropped", "removed", "tightened"
	Err    error
}

func (r *Report) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cache entry %s:", r.Entry)
	for i, it := range r.Items {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s %s (%v)", it.Action, it.File, it.Err)
	}
	return b.String()
}

// Unwrap gives the items' causes to errors.Is.
func (r *Report) Unwrap() []error {
	errs := make([]error, len(r.Items))
	for i, it := range r.Items {
		errs[i] = it.Err
	}
	return errs
}

// Dropped reports whether the entry's commit was dropped (the caller then
// indexes afresh); false when only stray files were removed or modes mended.
func (r *Report) Dropped() bool {
	return r != nil && errors.Is(r, ErrCorrupt) || r != nil && errors.Is(r, ErrFormat)
}

func (r *Report) add(file, action string, err error) {
	r.Items = append(r.Items, Item{File: file, Action: action, Err: err})
}

// orNil is r when it holds anything: a nil *Report must not become a
// non-nil error.
func (r *Report) orNil() *Report {
	if r == nil || len(r.Items) == 0 {
		return nil
	}
	return r
}

// asError is r as an error: nil (the interface, not a nil *Report) when it
// holds nothing.
func (r *Report) asError() error {
	if r.orNil() == nil {
		return nil
	}
	return r
}
