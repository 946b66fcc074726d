//go:build !unix

package main

import "io"

// terminalColumns: the width of a console is not asked for here; output is
// cut as for a pipe.
func terminalColumns(io.Writer) (int, bool) { return 0, false }
