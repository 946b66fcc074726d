package lsp

import "time"

// ReadFrame lets the external tests read framed messages as stream_test does.
var ReadFrame = readFrame

// WithInlineBudget returns o with the loop's budget (inline.go) set to d.
func WithInlineBudget(o Options, d time.Duration) Options {
	o.inlineBudget = d
	return o
}
