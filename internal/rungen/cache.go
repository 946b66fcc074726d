package rungen

import (
	"context"
	"fmt"
	"io"
	"io/fs"
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

// Copy copies the run in dir (a cached one, say) into a new folder made in
// parent, and returns it: a run that may be changed while the cached one
// stays as generated. It copies rather than links, since runls polls a file
// that has several links (it may be written through a path whose events go
// elsewhere), and a run's files have one.
func Copy(dir, parent string) (string, error) {
	to, err := os.MkdirTemp(parent, "copy-")
	if err != nil {
		return "", fmt.Errorf("rungen: copy: %w", err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		return copyFile(p, filepath.Join(to, rel))
	})
	if err != nil {
		os.RemoveAll(to)
		return "", fmt.Errorf("rungen: copy: %w", err)
	}
	return to, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
