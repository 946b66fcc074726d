package retriever

// This file holds the index's side of its cache entry (spec §15, issue
// 18): which entry a configuration names, and opening its writer
// (internal/persist), which restores the entry's last commit into the
// index and writes the index's commits.

import (
	"context"
	"crypto/sha256"
	"fmt"
	"runtime"
	"strings"

	"go.uber.org/zap"

	"runls/internal/store"
	"runls/masking"
	"runls/retriever/internal/persist"
)

// cacheFormat is the persisted index's format version, part of every
// entry's configuration: a runls that indexes, parses or masks differently,
// or lays the entry out differently, bumps it, and its entries are others.
const cacheFormat = 4 // 3: pieces' keys leave surrounding white space out; 4: a segment blob ends with its sections' index

// cacheConfig is the configuration an entry is for: the format version,
// masking and the interpreter's rules (spec §15). It is plain text, which
// `runls cache list` shows.
func cacheConfig(opts Options) []byte {
	mask := "off"
	if opts.Masker != nil && opts.Masker != masking.NoOp() {
		t := fmt.Sprintf("%T", opts.Masker) // *masking.hidingOutside
		mask = t[strings.LastIndexByte(t, '.')+1:]
	}
	rules := "none"
	if in := opts.Interpreter; in != nil {
		sum := sha256.Sum256(in.source)
		rules = fmt.Sprintf("%d rules sha256:%x", len(in.rules), sum[:8])
	}
	// The blobs are the machine's raw values (internal/persist/persist_codec.go): an entry
	// is for one architecture.
	return fmt.Appendf(nil, "format %d; %s; masking %s; interpreter %s", cacheFormat, runtime.GOARCH, mask, rules)
}

// openCache opens the entry of ix's run and configuration, or gives nil
// (said in the log) when the cache cannot be used.
func (ix *Index) openCache(opts Options) *persist.Writer {
	root := opts.Cache.Root
	if root == nil || !ix.IsRunFolder() {
		return nil // no entry for a folder that holds no run (yet)
	}
	// Its structure checked at open, each blob's bytes before their first
	// use (internal/persist/check.go): a reopen reads what its first
	// answer needs, not the whole entry (issue 33).
	entry, err := root.Open(ix.root, cacheConfig(opts), store.Options{MaxBytes: opts.Cache.MaxBytes, Verify: store.VerifyFrame, CallerOnDisk: true, Read: cacheReadMode(opts)})
	if err != nil {
		ix.log.Warn("the cache is not used", zap.Error(err))
		return nil
	}
	if rep := entry.Report(); rep != nil {
		if rep.Dropped() {
			ix.log.Warn("dropped a damaged cache entry; the run is indexed afresh", zap.Error(rep))
		} else {
			ix.log.Info("mended the cache entry", zap.Error(rep))
		}
	}
	return persist.Open(entry, ix.cacheHost(), persist.WriterOptions{Delay: opts.cacheDelay, FlushDocs: opts.flushDocs})
}

// cacheReadMode is how the entry's blobs are mapped: a command that
// reopens, answers and exits (OneShot) maps them off the page cache's 2 MB
// folios, so that its few reads leave few pages in its resident memory
// (the CLI's peak RSS, issue 33); a server maps them on the folios, whose
// searches then take fewer TLB misses (docs/cache.md "How blobs are
// mapped").
func cacheReadMode(opts Options) store.ReadMode {
	if opts.OneShot {
		return store.ReadMap
	}
	return store.ReadMapAligned
}

// cacheHost is what the cache's writer asks of the index.
func (ix *Index) cacheHost() persist.Host {
	return persist.Host{
		Mu: &ix.mu, State: &ix.state, RefreshMu: &ix.refreshMu, Indexed: &ix.indexed, Log: ix.log,
		Warn:  ix.once.warn,
		Rules: fileRules(),
		Forget: func() {
			ix.mu.Lock()
			defer ix.mu.Unlock()
			ix.state.Forget()
			ix.restored.Store(false)
			ix.fw.MarkAllDirty() // every folder walked, with or without events
		},
		Reindex: func(ctx context.Context) { ix.update(ctx, nil) },
	}
}
