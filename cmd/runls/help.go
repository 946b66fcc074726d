package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// A subcommand's --help: its synopsis, what it does, and its flags, one line
// each, on stdout (exit 0).

// helpRequested reports whether err is the flag package's answer to -h,
// -help or --help, and prints the help when it is.
func helpRequested(err error, fs *flag.FlagSet, synopsis, about string, stdout io.Writer) bool {
	if !errors.Is(err, flag.ErrHelp) {
		return false
	}
	fmt.Fprintf(stdout, "usage: %s\n\n%s\n\nflags:\n", synopsis, about)
	type row struct{ name, usage string }
	var rows []row
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if arg != "" {
			name += " " + arg
		}
		if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); isBool {
			name = "--" + f.Name
		}
		rows = append(rows, row{name, usage})
		width = max(width, len(name))
	})
	for _, r := range rows {
		fmt.Fprintf(stdout, "  %-*s  %s\n", width, r.name, r.usage)
	}
	return true
}
