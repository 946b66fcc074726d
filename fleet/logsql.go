package fleet

// This file holds the LogsQL that the VictoriaLogs store asks: the runs
// searched as a stream filter, a query's terms as word filters on the
// entries' `terms` field, and the evidence rules of spec §5 as filters.

import (
	"strconv"
	"strings"

	"runls/retriever"
)

// quote writes s as a LogsQL quoted string.
func quote(s string) string { return strconv.Quote(s) }

// runsFilter selects the runs named (none: every run).
func runsFilter(runs []string) string {
	if len(runs) == 0 {
		return "*"
	}
	q := make([]string, len(runs))
	for i, r := range runs {
		q[i] = quote(r)
	}
	return "{run in (" + strings.Join(q, ",") + ")}"
}

// anyTerm matches the entries whose terms hold any of terms.
func anyTerm(terms []string) string {
	if len(terms) == 1 {
		return "terms:" + quote(terms[0])
	}
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = "terms:" + quote(t)
	}
	return "(" + strings.Join(q, " OR ") + ")"
}

// ifOf is a stats function's condition made of filters (all must hold);
// "" when there is none.
func ifOf(filters ...string) string {
	f := nonEmpty(filters)
	if len(f) == 0 {
		return ""
	}
	return " if (" + strings.Join(f, " ") + ")"
}

func nonEmpty(parts []string) []string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// nothing matches no entry: every entry has a run.
const nothing = `run:=""`

// rulesFilter is rules 1-4 of spec §5 (Request.RuleReason's) as a filter.
func rulesFilter(r Rules) string {
	var parts []string
	num, hasEpisode := retriever.EpisodeNumber(r.Episode)
	if r.ScopeEpisode {
		if !hasEpisode {
			return nothing // rule 1
		}
		parts = append(parts, "episode_n:="+quote(num))
	}
	switch {
	case !hasEpisode || r.Conversation == "":
		parts = append(parts, "form:=note") // rule 2
	case r.AllConversations:
		// rule 4 still: an unfielded record of the current episode is out
		parts = append(parts, "(form:=note OR NOT episode_n:="+quote(num)+" OR NOT unfielded:=1)")
	default:
		// rules 3 and 4: of the current episode, the request's
		// conversation and "-" (an unfielded record has none)
		parts = append(parts, "(form:=note OR NOT episode_n:="+quote(num)+" OR conversation:in("+quote(r.Conversation)+`, "-"))`)
	}
	return strings.Join(parts, " ")
}
