//go:build !linux

package runfs

// OrderedEvents: other systems' events are not known to come in the order
// of the changes, so a search there gives each file a stat (see barrier).
const OrderedEvents = false

func Unwatchable(string) error { return nil }
