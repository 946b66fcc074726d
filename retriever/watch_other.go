//go:build !linux

package retriever

// orderedEvents: other systems' events are not known to come in the order
// of the changes, so a search there gives each file a stat (see barrier).
const orderedEvents = false

func unwatchable(string) error { return nil }
