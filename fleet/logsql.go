package fleet

// This file holds the LogsQL that the VictoriaLogs store asks: the runs
// searched as a stream filter (records, or the tallies' rows), a query's
// terms as word filters on `_msg` and `terms`, and the evidence rules of
// spec §5 as filters.

import (
	"strconv"
	"strings"

	"runls/retriever"
)

// quote writes s as a LogsQL quoted string.
func quote(s string) string { return strconv.Quote(s) }

// recordStreams selects the records of the runs named (none: every run)
// and of the agent (none: every agent): the streams without a kind, which
// the tallies' streams have.
func recordStreams(runs []string, agent string) string {
	return streams(append(runsIn(runs), agentLabel(agent)...), `kind=""`)
}

// tallyRows selects the tallies' rows of a kind ("stats", "dict") of the
// runs and agent: one stream a kind (a stream a run and agent made some
// 10,000 streams of a few rows, and a search read a block of each).
func tallyRows(kind string, runs []string, agent string) string {
	out := "{kind=" + quote(kind) + "}"
	if len(runs) > 0 {
		q := make([]string, len(runs))
		for i, r := range runs {
			q[i] = quote(r)
		}
		out += " run:in(" + strings.Join(q, ",") + ")"
	}
	if agent != "" {
		out += " " + agentIs(agent)
	}
	return out
}

func streams(labels []string, kind string) string {
	return "{" + strings.Join(append(labels, kind), ", ") + "}"
}

func runsIn(runs []string) []string {
	if len(runs) == 0 {
		return nil
	}
	q := make([]string, len(runs))
	for i, r := range runs {
		q[i] = quote(r)
	}
	return []string{"run in (" + strings.Join(q, ",") + ")"}
}

func agentLabel(agent string) []string {
	if agent == "" {
		return nil
	}
	return []string{"agent=" + quote(agent)}
}

// agentIs is a filter on an agent ("" for none).
func agentIs(agent string) string {
	if agent == "" {
		return ""
	}
	return "agent:=" + quote(agent)
}

// anyTerm matches the entries that hold any of terms (runls' terms): as
// a word of the store's in _msg, or in `terms` (see storeTerms).
func anyTerm(terms []string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = quote(t) + " OR terms:" + quote(t)
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
