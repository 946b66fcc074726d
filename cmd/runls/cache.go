// This file holds `runls cache list [RUN]` and `runls cache clear [RUN]`
// (spec §15): what the cache of persisted indexes holds, what a reopen of a
// run would read again, and freeing it.

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"runls/internal/store"
	"runls/retriever"
)

// runCache is `runls cache list|clear`. Exit status 0, or 1 when clear kept
// an entry a running runls writes, 2 on an error.
func runCache(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageError(stderr, "cache needs list or clear")
	}
	fs := flag.NewFlagSet("cache "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("cache-dir", "", "")
	// Flags may come after RUN_FOLDER too, as for the other subcommands.
	var pos []string
	for rest := args[1:]; ; {
		if err := fs.Parse(rest); err != nil {
			return usageError(stderr, "%v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	switch {
	case (args[0] == "list" || args[0] == "clear") && len(pos) <= 1:
	case args[0] == "list" || args[0] == "clear":
		return usageError(stderr, "too many arguments to cache %s", args[0])
	default:
		return usageError(stderr, "unknown cache subcommand %q", args[0])
	}
	root, err := store.Locate(*dir, false, os.Getenv)
	if err != nil {
		return fail(stderr, err)
	}
	infos, err := root.List()
	if err != nil {
		return fail(stderr, err)
	}
	var want string // the run's real path; "": every entry
	if len(pos) == 1 {
		if want, err = entryRun(pos[0]); err != nil {
			return fail(stderr, err)
		}
	}
	if args[0] == "list" {
		return cacheList(ctx, root, infos, want, stdout, stderr)
	}
	return cacheClear(root, infos, want, stdout, stderr)
}

// entryRun is the run path entries of the run folder run name: its real
// path, or when it was deleted since, its absolute path (as they name it).
func entryRun(run string) (string, error) {
	real, err := store.RealPath(run)
	if err != nil {
		return filepath.Abs(run)
	}
	return real, nil
}

// cacheList prints one line per entry, used most recently first: the run,
// the entry's size, when it was last used, and its configuration. With a
// run folder (want), only its entries, then for each what a reopen of the
// run from it would read now (retriever.PlanReopen).
func cacheList(ctx context.Context, root *store.Root, infos []store.EntryInfo, want string, stdout, stderr io.Writer) int {
	if want != "" {
		infos = slices.DeleteFunc(infos, func(info store.EntryInfo) bool { return info.Err != nil || info.RunPath != want })
	}
	if len(infos) == 0 {
		fmt.Fprintf(stdout, "no entries in %s\n", root.Path())
		return exitFound
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSIZE\tLAST USED\tCONFIGURATION")
	var total int64
	for _, info := range infos {
		run, config := info.RunPath, showConfig(info.Config)
		if info.Err != nil {
			run, config = info.Key, "(no commit: "+shortErr(info.Err)+")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", run, showSize(info.Size), info.LastUsed.Local().Format(time.DateTime), config)
		total += info.Size
	}
	tw.Flush()
	fmt.Fprintf(stdout, "%d entries, %s in %s\n", len(infos), showSize(total), root.Path())
	if want == "" {
		return exitFound
	}
	for _, info := range infos {
		p, err := retriever.PlanReopen(ctx, want, info.Caller)
		if err != nil {
			fmt.Fprintf(stderr, "runls: %s: %v\n", showConfig(info.Config), err)
			continue
		}
		fmt.Fprintf(stdout, "%s: a reopen reads %s of %d files: %d unchanged, %d grown, %d read again, %d new, %d gone\n",
			showConfig(info.Config), showSize(p.ReadBytes), p.Files, p.Unchanged, p.Grown, p.Reread, p.New, p.Gone)
	}
	return exitFound
}

// cacheClear removes every entry, or those of the run folder want (every
// configuration of it). An entry whose run is given but cannot be told
// (its manifest does not read) is kept; clear without a run removes it.
func cacheClear(root *store.Root, infos []store.EntryInfo, want string, stdout, stderr io.Writer) int {
	removed, kept := 0, 0
	var freed int64
	for _, info := range infos {
		if want != "" && (info.Err != nil || info.RunPath != want) {
			continue
		}
		err := root.Remove(info.Key)
		if errors.Is(err, store.ErrInUse) {
			fmt.Fprintf(stderr, "runls: kept %s: in use by a running runls\n", orKey(info))
			kept++
			continue
		}
		if err != nil {
			return fail(stderr, err)
		}
		removed++
		freed += info.Size
	}
	fmt.Fprintf(stdout, "removed %d entries, %s\n", removed, showSize(freed))
	if kept > 0 {
		return exitNotFound
	}
	return exitFound
}

func orKey(info store.EntryInfo) string {
	if info.Err != nil {
		return info.Key
	}
	return info.RunPath
}

// showConfig is the configuration as the retriever wrote it when it is
// plain text, else its hash.
func showConfig(c []byte) string {
	s := string(c)
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	h := store.ConfigHash(c)
	return fmt.Sprintf("sha256:%x", h[:8])
}

func showSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func shortErr(err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return "none yet"
	}
	return err.Error()
}
