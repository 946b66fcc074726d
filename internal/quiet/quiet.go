// Package quiet waits for a pause in a server's requests: the language
// server and the MCP server ask the index for its merges once one has
// lasted (a merge beside a person's or an agent's line of questioning
// would slow its answers).
package quiet

import (
	"context"
	"time"
)

// Await waits until no request has been answered for pause, counted from
// its own call, as lastBusy tells (now while one is being answered), and
// reports whether it did before ctx ended. It looks every eighth of the
// pause (a millisecond at least).
func Await(ctx context.Context, pause time.Duration, lastBusy func() time.Time) bool {
	start := time.Now()
	t := time.NewTicker(max(pause/8, time.Millisecond))
	defer t.Stop()
	for {
		if time.Since(start) >= pause && time.Since(lastBusy()) >= pause {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}
