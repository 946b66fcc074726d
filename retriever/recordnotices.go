package retriever

// RecordsNotices are the notices of spec §12 for a run/records request (§13:
// `runls records` says what its filters matched nothing of, as `runls
// search` does): an agent with no agent folder of that name in the run
// (with the one differing only in case) or in the episode, an episode with
// no folder, a conversation no record of the episode was written in. req
// is valid.
func (ix *Index) RecordsNotices(req RecordsRequest) []Notice {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := noticesOf(&ix.state, Request{Agent: req.Agent, Episode: req.Episode, Conversation: req.Conversation})
	num, _ := EpisodeNumber(req.Episode)
	if req.Agent == "" || !ix.state.HasAgent(req.Agent) || !ix.state.HasEpisode(num, EpisodeNumber) {
		return out
	}
	id := ix.state.AgentIDs[req.Agent]
	for _, fs := range ix.state.Files {
		if fs.Agent == id && fs.EpNum() == num {
			return out
		}
	}
	return append(out, Notice{Field: "agent", Value: req.Agent, Message: req.Episode + " has no agent folder named " + req.Agent})
}
