package main

// This file holds `runls ship` (spec §16): runs sent to a shared store,
// masked by default, idempotent, --follow.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"runls/fleet"
	"runls/masking"
	"runls/retriever"
)

const (
	shipSynopsis = "runls ship [flags] RUN_FOLDER... --to URL"
	shipAbout    = `Sends every record and note of each run to the fleet store at URL
(VictoriaLogs), one entry each, masked unless --no-mask. Shipping again sends
only what the store does not hold; --follow keeps shipping as the run grows.
At the end the store's counts are checked: records it dropped are an error.
Exit status: 0 shipped, 2 error.`
)

// runShip is `runls ship`.
func runShip(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ship", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	to := fs.String("to", "", "the fleet store's `URL` (VictoriaLogs front, http://host:port)")
	runID := fs.String("run-id", "", "the run's id in the store (`ID`; default the run folder's name; one run folder only)")
	follow := fs.Bool("follow", false, "keep shipping as the run grows, until interrupted")
	noMask := fs.Bool("no-mask", false, "send the evidence text unmasked (masking is on by default: a shared store is read by a team)")
	rules := fs.String("interpreter", "", "record interpreter `rules.json` (told/said/leftOut rules)")
	quiet := fs.Bool("quiet", false, "print no progress")
	cache := addCacheFlags(fs)
	use := usage{shipSynopsis, "ship"}
	roots, err := parseInterspersed(fs, args)
	if err != nil {
		if helpRequested(err, fs, shipSynopsis, shipAbout, stdout) {
			return exitFound
		}
		return use.errorf(stderr, "%v", err)
	}
	switch {
	case len(roots) == 0:
		return use.errorf(stderr, "ship needs a run folder")
	case *to == "":
		return use.errorf(stderr, "ship needs --to URL, the fleet store")
	case *runID != "" && len(roots) > 1:
		return use.errorf(stderr, "--run-id names one run: give one run folder")
	case *follow && len(roots) > 1:
		return use.errorf(stderr, "--follow follows one run folder")
	}
	st, err := fleet.NewVictoriaLogs(*to)
	if err != nil {
		return use.errorf(stderr, "%v", err)
	}
	var rulesSum string
	var in *retriever.Interpreter
	if *rules != "" {
		b, err := retriever.ReadRules(*rules)
		if err != nil {
			return use.fail(stderr, err)
		}
		if in, err = retriever.ParseInterpreter(b); err != nil {
			return use.fail(stderr, err)
		}
		s := sha256.Sum256(b)
		rulesSum = hex.EncodeToString(s[:])
	}
	cacheOpts, err := cache.options(func(err error) { fmt.Fprintf(stderr, "runls: warning: %v\n", err) })
	if err != nil {
		return use.errorf(stderr, "%v", err)
	}
	if stop := startCPUProfile(cliLogger(stderr)); stop != nil {
		defer stop()
	}
	// A ship's heap is its batches in flight, read once and dropped: a
	// collection at every 4x growth, not 2x, took a third of its CPU from
	// the collector for some 100 MB more.
	debug.SetGCPercent(300)
	start := time.Now()
	ids := make(map[string]string, len(roots))
	for _, root := range roots {
		id := *runID
		if id == "" {
			real, err := filepath.EvalSymlinks(root)
			if err != nil {
				return use.fail(stderr, fmt.Errorf("open run folder: %w", err))
			}
			id = filepath.Base(real)
		}
		ids[root] = id
	}
	// What the store holds of the runs, asked once for all of them (a run
	// it holds nothing of, without its offsets file, is not asked again).
	unshipped, err := fleet.Unshipped(ctx, st, slices.Collect(maps.Values(ids)))
	if err != nil {
		return use.fail(stderr, err)
	}
	var mu sync.Mutex
	var total fleet.Summary
	want := map[string]int64{}
	shipOne := func(root string) error {
		id := ids[root]
		ix, err := openShipIndex(ctx, root, !*noMask, in, cacheOpts, stderr)
		if err != nil {
			return err
		}
		defer ix.Close()
		opts := fleet.ShipOptions{Run: id, Follow: *follow, Unshipped: unshipped[id]}
		if cacheOpts.Root != nil {
			opts.StateFile = fleet.StateFile(cacheOpts.Root.Path(), *to, id, ix.Root(), fmt.Sprintf("mask=%v rules=%s", !*noMask, rulesSum))
		}
		if !*quiet {
			opts.Progress = func(s fleet.Summary) {
				mu.Lock()
				defer mu.Unlock()
				fmt.Fprintf(stderr, "runls: note: %s: %d records sent, %.1f MB read\n", id, s.Records, float64(s.Bytes)/1e6)
			}
		}
		sum, err := fleet.Ship(ctx, st, ix, opts)
		mu.Lock()
		defer mu.Unlock()
		total.Records += sum.Records
		total.Bytes += sum.Bytes
		total.Text += sum.Text
		want[id] = sum.Held
		if err != nil {
			return fmt.Errorf("ship %s: %w", root, err)
		}
		return nil
	}
	if err := forEach(roots, shipOne); err != nil {
		return use.fail(stderr, err)
	}
	if !*follow {
		if err := fleet.CheckHeld(ctx, st, want, 60*time.Second); err != nil {
			return use.fail(stderr, err)
		}
	}
	secs := time.Since(start).Seconds()
	fmt.Fprintf(stdout, "shipped %d records of %d runs (%.1f MB read, %.1f MB of text sent) in %.2f s (%.1f MB/s)\n",
		total.Records, len(roots), float64(total.Bytes)/1e6, float64(total.Text)/1e6, secs, float64(total.Bytes)/1e6/max(secs, 1e-9))
	return exitFound
}

// forEach ships roots on as many workers as there are cores, stopping at
// the first error.
func forEach(roots []string, ship func(string) error) error {
	work := make(chan string)
	errs := make(chan error, len(roots))
	var wg sync.WaitGroup
	for range min(len(roots), runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				if err := ship(r); err != nil {
					errs <- err
				}
			}
		}()
	}
	for _, r := range roots {
		if len(errs) > 0 {
			break
		}
		work <- r
	}
	close(work)
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// openShipIndex opens a run folder for shipping: as openIndex does, but
// without bounding the process's memory by one run (ship opens several).
func openShipIndex(ctx context.Context, root string, mask bool, in *retriever.Interpreter, cache retriever.CacheOptions, stderr io.Writer) (*retriever.Index, error) {
	opts := retriever.Options{Root: root, Logger: cliLogger(stderr), Cache: cache, Interpreter: in}
	if mask {
		real, err := filepath.EvalSymlinks(root)
		if err != nil {
			return nil, fmt.Errorf("open run folder: %w", err)
		}
		opts.Masker = masking.HidingOutside(real)
	}
	return retriever.Open(ctx, opts)
}
