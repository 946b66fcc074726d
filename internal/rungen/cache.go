package rungen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Version names the generator's output: it changes whenever the bytes written for
// the same Options change (TestGoldenHash fails until it does), so cached runs of an
// older generator are never reused.
const Version = 2

// Cached returns the folder of the run of opts under cacheDir, generating it first
// when it is not there yet. Runs are keyed by Version and every option that changes
// the bytes; a run appears under its key only once complete (it is written to a
// temporary folder and renamed), so concurrent callers and interrupted runs are safe.
// Benchmarks use it to avoid writing a large run on every invocation.
func Cached(ctx context.Context, cacheDir string, opts Options) (string, error) {
	if err := opts.validate(); err != nil {
		return "", err
	}
	o := opts.Defaults()
	key := fmt.Sprintf("run-v%d-b%d-s%d-e%d-a%d-f%d-u%d-c%d-v%d", Version, o.Bytes, o.Seed,
		o.Episodes, o.Agents, o.FilesPerAgent, o.UnfieldedEpisodes, o.Conversations, o.VocabularySize)
	final := filepath.Join(cacheDir, key)
	if fi, err := os.Stat(final); err == nil && fi.IsDir() {
		return final, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("rungen: cache: %w", err)
	}
	tmp, err := os.MkdirTemp(cacheDir, "tmp-"+key+"-")
	if err != nil {
		return "", fmt.Errorf("rungen: cache: %w", err)
	}
	if _, err := Generate(ctx, tmp, opts); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		// Another caller may have finished the same run first.
		if fi, serr := os.Stat(final); serr == nil && fi.IsDir() {
			return final, nil
		}
		return "", fmt.Errorf("rungen: cache: %w", err)
	}
	return final, nil
}
