package runfs

import "strings"

// The names of a run's folders (spec §1): `episode-N` folders hold agent
// folders, which hold the agent files.

// ValidAgent reports whether name can name an agent folder.
func ValidAgent(name string) bool {
	return name != "." && name != ".." && name != "" && !strings.ContainsAny(name, `/\`) && !strings.ContainsRune(name, 0)
}

// EpisodeNumber returns the decimal digits of an `episode-N` name without
// leading zeros (so that episode-07 is episode 7 and no number overflows).
func EpisodeNumber(name string) (string, bool) {
	digits, ok := strings.CutPrefix(name, "episode-")
	if !ok || digits == "" {
		return "", false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return "", false
		}
	}
	n := strings.TrimLeft(digits, "0")
	if n == "" {
		n = "0"
	}
	return n, true
}
