// Package runfs is the run folder on disk: the names of its folders
// (names.go), a file's stat kept as a value (stat.go), its identity and
// the racy-time rule (identity.go), opened folders whose files open with
// no link followed (folder*.go), the open handles results are read through
// (handles.go), and what watching needs of the system: the barrier that
// tells when every event queued before a search has been read (barrier.go),
// which folders raise no event (watch_*.go), and what the events tell the
// updates: the folders watched and polled, the paths marked (changes.go);
// and discovery, the walk that finds the agent files an update may have to
// read, full or from those marks, with the folder listings it keeps
// between updates (discovery.go, discover.go, listing.go).
//
// It knows no index, table, segment, cache or masker: what an update reads
// of a file found, and what it makes of it, are the retriever's (its
// following, follow.go); this package gives it the files and the system's
// facts (deps_test.go keeps it so).
package runfs
