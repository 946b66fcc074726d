package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"runls/retriever"
)

// Progress on stderr while a run's first index is built (issue 27: the
// first search of a 100 MB run was 14 s of silence), only when stderr is a
// terminal: one line, rewritten in place, cleared at the end, so that
// nothing of it stays in what a script or a pipe reads.

const (
	progressAfter = 500 * time.Millisecond // a quick open (a cache entry) shows nothing
	progressEvery = 200 * time.Millisecond
)

// indexWithProgress brings ix up to date, showing how far it is on stderr
// when stderr is a terminal and it takes a while.
func indexWithProgress(ctx context.Context, ix *retriever.Index, stderr io.Writer) error {
	if _, ok := terminalColumns(stderr); !ok {
		return nil // the command's own request brings the index up to date
	}
	start := time.Now()
	var last time.Time
	shown := false
	_, err := ix.Refresh(ctx, func(p retriever.Progress) {
		now := time.Now()
		if now.Sub(start) < progressAfter || now.Sub(last) < progressEvery {
			return
		}
		last, shown = now, true
		fmt.Fprint(stderr, "\r\033[K"+progressLine(p))
	})
	if shown {
		fmt.Fprint(stderr, "\r\033[K")
	}
	return err
}

// progressLine says how far indexing is.
func progressLine(p retriever.Progress) string {
	pct := 0
	if p.BytesTotal > 0 {
		pct = int(p.BytesDone * 100 / p.BytesTotal)
	}
	return fmt.Sprintf("runls: indexing the run: %d%% (%d of %d files, %d of %d MB)", pct, p.FilesDone, p.FilesTotal, p.BytesDone>>20, p.BytesTotal>>20)
}
