package runfs

// This file holds what discovery keeps between updates (Discovery) and
// what it logs through (ScanLog).

import (
	"sync/atomic"

	"go.uber.org/zap"
)

// Discovery is what discovery keeps between updates and the watcher's view
// (Events, under its own lock). Its other fields are read and written by
// updates only, one at a time.
type Discovery struct {
	Events

	// PollFiles are files no event covers (hard links, failed reads): a
	// stat at each update.
	PollFiles map[string]bool
	Listings  atomic.Int64     // folders listed (read) by updates, for tests
	Stats     atomic.Int64     // stats of files and folders by updates, for tests
	Listed    func(rel string) // a folder was listed; a test's hook, set before use

	dirs       map[string]*dirState // by slash path relative to the root, "." the root
	unreadable map[string]bool      // folders that exist but cannot be read: tried at each update
	left       leftover             // what a cancelled update did not do
}

// ScanLog is where a scan reports, each key once: a folder it cannot read
// (Warn), a link it does not follow (WarnLink), a folder replaced by a file
// (Note).
type ScanLog interface {
	Warn(key, msg string, fields ...zap.Field)
	Note(key, msg string, fields ...zap.Field)
	WarnLink(root, rel string)
}

// Leave keeps what a cancelled update did not do for the next scan: the
// files it found and did not read, the files it found gone, and whether
// the episodes changed.
func (d *Discovery) Leave(files, removed []string, episodes bool) {
	if d.left.names == nil {
		d.left.names, d.left.removed = map[string]bool{}, map[string]bool{}
	}
	for _, rel := range files {
		d.left.names[rel] = true
	}
	for _, rel := range removed {
		d.left.removed[rel] = true
	}
	d.left.episodes = d.left.episodes || episodes
}

// Settle ends an update (the caller's, under its update lock, whatever
// way it returns): what it left to poll or retry is told to Events.Quiet.
func (d *Discovery) Settle() {
	left := len(d.left.names) > 0 || len(d.left.removed) > 0 || d.left.episodes
	d.settle(len(d.PollFiles), left || len(d.unreadable) > 0)
}

// leftover is what a cancelled update found and did not do: files to plan,
// files to drop, and whether the episodes changed.
type leftover struct {
	names, removed map[string]bool
	episodes       bool
}
