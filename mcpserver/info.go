package mcpserver

// This file holds the run_info tool: what the run holds (spec §9 run/info),
// so that an agent learns the episode and conversation ids to search with.

import (
	"context"
	"fmt"
	"strings"

	"runls/retriever"
)

var runInfoTool = toolSpec{
	name:  "run_info",
	title: "What the run holds",
	description: "List the run's episodes (episode-N, in order), the agents of each and the conversation ids written in each, " +
		"and how much is indexed. Call it first, to learn the episode and conversation to give search.",
	// run/info does not wait for the index (spec §9): its indexing says how far it is.
	whileIndexing: true,
}

type runInfoInput struct{}

// The structured result is run/info's (retriever.Info), its lists never
// null.

func (s *Server) runInfo(ctx context.Context, _ runInfoInput) (retriever.Info, string, error) {
	info, err := s.eng.Info(ctx)
	if err != nil {
		return retriever.Info{}, "", err
	}
	info.Agents = nonNil(info.Agents)
	if info.Episodes == nil {
		info.Episodes = []retriever.EpisodeInfo{}
	}
	for i := range info.Episodes {
		info.Episodes[i].Agents = nonNil(info.Episodes[i].Agents)
		info.Episodes[i].Conversations = nonNil(info.Episodes[i].Conversations)
	}
	return info, renderInfo(s.eng.Root(), info), nil
}

func renderInfo(root string, info retriever.Info) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s: %d episodes, agents %s; %d files indexed (%d bytes)", root, len(info.Episodes), list(info.Agents), info.Indexing.Files, info.Indexing.Bytes)
	if !info.Indexing.Done {
		b.WriteString(", indexing")
	}
	b.WriteString("\n")
	for _, e := range info.Episodes {
		fmt.Fprintf(&b, "%s: agents %s; conversations %s\n", e.Episode, list(e.Agents), list(e.Conversations))
	}
	return b.String()
}

func list(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
