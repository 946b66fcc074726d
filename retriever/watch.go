package retriever

import (
	"context"
	"time"
)

// pollInterval is how often Watch brings the index up to date.
const pollInterval = 500 * time.Millisecond

// Watch keeps the index current until ctx ends, calling onChange with the
// record files whose diagnostics may have changed, whichever update (a search's
// or the watcher's) found the change.
func (ix *Index) Watch(ctx context.Context, onChange func(Changes)) error {
	ix.subscribe(onChange)
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if _, err := ix.Refresh(ctx, nil); err != nil && ctx.Err() == nil {
				ix.log.Sugar().Debugf("update: %v", err)
			}
		}
	}
}

func (ix *Index) subscribe(fn func(Changes)) {
	ix.subsMu.Lock()
	ix.subs = append(ix.subs, fn)
	ix.subsMu.Unlock()
}

func (ix *Index) notify(c Changes) {
	if len(c.Files) == 0 {
		return
	}
	ix.subsMu.Lock()
	subs := append([]func(Changes){}, ix.subs...)
	ix.subsMu.Unlock()
	for _, fn := range subs {
		fn(c)
	}
}
