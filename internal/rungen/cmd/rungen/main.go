// Command rungen writes a deterministic, realistic run of a given size (see package
// rungen), prints the benchmark query set of a run, or appends records to a file.
//
//	go run ./internal/rungen/cmd/rungen -size 100MB -seed 1 -out DIR
//	go run ./internal/rungen/cmd/rungen -seed 1 -queries 20
//	go run ./internal/rungen/cmd/rungen -seed 1 -append FILE -records 1000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"runls/internal/rungen"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "rungen:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("rungen", flag.ContinueOnError)
	var (
		size     = fs.String("size", "100MB", "total size of the run: bytes, or with KB, MB, GB (powers of 1024)")
		seed     = fs.Int64("seed", 1, "seed; the same seed and options give the same bytes")
		out      = fs.String("out", "", "output folder (missing or empty)")
		episodes = fs.Int("episodes", 0, "episodes (default 10)")
		agents   = fs.Int("agents", 0, "agents per episode (default 4)")
		files    = fs.Int("files", 0, "note files per agent (default 2)")
		workers  = fs.Int("workers", 0, "files written at once (default GOMAXPROCS)")
		queries  = fs.Int("queries", 0, "print this many benchmark queries, one a line, and exit")
		appendTo = fs.String("append", "", "append -records records to this file and exit")
		records  = fs.Int("records", 1000, "records to append with -append")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	bytes, err := parseSize(*size)
	if err != nil {
		return err
	}
	opts := rungen.Options{Bytes: bytes, Seed: *seed, Episodes: *episodes, Agents: *agents,
		FilesPerAgent: *files, Workers: *workers}
	switch {
	case *queries > 0:
		for _, q := range rungen.Queries(opts, *queries) {
			fmt.Println(q)
		}
		return nil
	case *appendTo != "":
		n, err := rungen.NewAppender(opts).Append(*appendTo, *records)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "appended %d bytes to %s\n", n, *appendTo)
		return nil
	case *out == "":
		return fmt.Errorf("-out is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	st, err := rungen.Generate(ctx, *out, opts)
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	fmt.Fprintf(os.Stderr, "wrote %s: %d files, %d bytes, %d lines, %d records (%d with a stack trace) in %.2fs (%.0f MB/s)\n",
		*out, st.Files, st.Bytes, st.Lines, st.Records, st.StackTraces, secs, float64(st.Bytes)/secs/1e6)
	return nil
}

// parseSize reads a -size value (rungen.ParseSize).
func parseSize(s string) (int64, error) {
	n, err := rungen.ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("-%w", err)
	}
	return n, nil
}
