package retriever

// What of a run/failures answer a client asked for (runls' own params,
// spec §9 being silent on asking for less): fewer locations a group
// (maxRecords), or one group (pattern). An editor lists the groups
// collapsed with their counts, and fetches a group's records when it is
// expanded: §9's whole answer is 370 KB at 1 GB, whose parse alone (Node's
// JSON.parse, 1.5 ms) cost an editor twice a search's round trip.
//
// A view is cut from §9's answer, which the index keeps for the committed
// state (failuresAnswer), so that a view and the whole answer never
// disagree; a group the answer does not hold (ranked below the best
// MaxFailureGroups) is grouped from the failures the answer was made from
// (Index.failures).

// failuresView is what of the answer a request asks for.
type failuresView struct {
	maxRecords int    // locations a group, 0 to MaxFailureRecords
	pattern    string // "": every group
}

// view answers v from the kept answer (the caller holds a.mu); false: v
// asks for a group the answer does not hold.
func (a *failuresAnswer) view(v failuresView) (FailuresResult, bool) {
	if v.pattern != "" {
		for i := range a.res.Groups {
			if a.res.Groups[i].Pattern == v.pattern {
				return FailuresResult{Groups: trimGroups(a.res.Groups[i:i+1], v.maxRecords)}, true
			}
		}
		return FailuresResult{}, false
	}
	if v.maxRecords >= MaxFailureRecords {
		return *a.res, true
	}
	if res, ok := a.views[v.maxRecords]; ok {
		return *res, true
	}
	res := &FailuresResult{Groups: trimGroups(a.res.Groups, v.maxRecords), enc: &encodedOnce{}}
	if a.views == nil {
		a.views = map[int]*FailuresResult{}
	}
	a.views[v.maxRecords] = res
	return *res, true
}

// trimGroups is groups with at most n records each. The groups are
// copied; their lists are the kept answer's.
func trimGroups(groups []FailureGroup, n int) []FailureGroup {
	if groups == nil {
		return nil
	}
	out := make([]FailureGroup, len(groups))
	for i, g := range groups {
		if len(g.Records) > n {
			g.Records, g.Paths = g.Records[:n:n], g.Paths[:n:n]
		}
		out[i] = g
	}
	return out
}
