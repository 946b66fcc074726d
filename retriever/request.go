package retriever

import (
	"strconv"

	"runls/retriever/internal/runfs"
)

// Validate checks a request's fields (spec §5), returning a *FieldError.
func (r Request) Validate() error {
	if r.Episode != "" {
		if _, ok := EpisodeNumber(r.Episode); !ok {
			return &FieldError{"episode", r.Episode, "want episode-N, N decimal digits"}
		}
	}
	switch r.Scope {
	case "", "run", "episode":
	default:
		return &FieldError{"scope", r.Scope, `want "run" or "episode"`}
	}
	if r.TopK < 0 || r.TopK > MaxTopK {
		return TopKError(strconv.Itoa(r.TopK))
	}
	if r.Agent != "" && !ValidAgent(r.Agent) {
		return &FieldError{"agent", r.Agent, `an agent folder name: no "/" or "\", not "." or ".."`}
	}
	if _, err := parseTimeWindow(r.From, r.To); err != nil {
		return err
	}
	return nil
}

// ValidAgent reports whether name can name an agent folder.
func ValidAgent(name string) bool { return runfs.ValidAgent(name) }

// EpisodeNumber returns the decimal digits of an `episode-N` name without
// leading zeros (so that episode-07 is episode 7 and no number overflows).
func EpisodeNumber(name string) (string, bool) { return runfs.EpisodeNumber(name) }

func (r Request) topK() int {
	if r.TopK == 0 {
		return DefaultTopK
	}
	return r.TopK
}

func (r Request) rankingText() string {
	if r.TurnMessage != "" {
		return r.TurnMessage
	}
	return r.Query
}

// TopKError rejects a topK outside 1 to MaxTopK, as every front end words it.
func TopKError(value string) *FieldError {
	return &FieldError{"topK", value, "want 1 to " + strconv.Itoa(MaxTopK)}
}

// RecordsLimitError rejects a run/records limit outside 1 to MaxRecordsLimit,
// as every front end words it.
func RecordsLimitError(value string) *FieldError {
	return &FieldError{"limit", value, "want 1 to " + strconv.Itoa(MaxRecordsLimit)}
}
