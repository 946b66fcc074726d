// This file holds the cache flags of the commands that open a run (spec
// §15): --no-cache, --cache-dir DIR (or $RUNLS_CACHE_DIR) and --cache-max,
// one set for serve, search, check, records and mcp, and how they become
// the retriever's options.

package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"runls/internal/store"
	"runls/retriever"
)

// cacheFlags are the cache flags of one command.
type cacheFlags struct {
	off bool
	dir string
	max string
}

// addCacheFlags defines the cache flags on fs.
func addCacheFlags(fs *flag.FlagSet) *cacheFlags {
	c := &cacheFlags{}
	fs.BoolVar(&c.off, "no-cache", false, "keep no index of the run in the cache folder (and read none)")
	fs.StringVar(&c.dir, "cache-dir", "", "keep the run's index in folder `DIR` (default $"+store.EnvDir+", else $XDG_CACHE_HOME/runls or ~/.cache/runls)")
	fs.StringVar(&c.max, "cache-max", "", "bound the whole cache folder to `SIZE` bytes (K, M, G, T: powers of 1024; 0: no bound; default 4G)")
	return c
}

// options are the retriever's cache options. A cache folder that cannot be
// used (another user's, no locks) is said on warn and the index keeps none;
// a bad --cache-max is an error naming the flag.
func (c *cacheFlags) options(warn func(error)) (retriever.CacheOptions, error) {
	maxBytes := int64(store.DefaultMaxBytes)
	if c.max != "" {
		n, err := parseSize(c.max)
		if err != nil {
			return retriever.CacheOptions{}, &retriever.FieldError{Field: "--cache-max", Value: c.max, Reason: err.Error()}
		}
		maxBytes = n
	}
	root, err := store.Locate(c.dir, c.off, os.Getenv)
	if err != nil {
		warn(fmt.Errorf("the cache is not used: %w", err))
		return retriever.CacheOptions{}, nil
	}
	return retriever.CacheOptions{Root: root, MaxBytes: maxBytes}, nil
}

// parseSize reads a byte count: digits, then optionally K, M, G or T
// (powers of 1024, with an optional "i" and "B": 4G, 4GiB, 512MB).
func parseSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(s), "B"), "I")
	shift := 0
	if t != "" {
		if i := strings.IndexByte("KMGT", t[len(t)-1]); i >= 0 {
			shift = 10 * (i + 1)
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("want a size in bytes, such as 4G or 500M")
	}
	return n << shift, nil
}
