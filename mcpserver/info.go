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
}

type runInfoInput struct{}

type runInfoOutput struct {
	Root     string        `json:"root" jsonschema:"the run folder, as a file URI"`
	Agents   []string      `json:"agents"`
	Episodes []episodeInfo `json:"episodes"`
	Indexing indexingInfo  `json:"indexing"`
}

type episodeInfo struct {
	Episode       string   `json:"episode"`
	Agents        []string `json:"agents"`
	Conversations []string `json:"conversations"`
}

type indexingInfo struct {
	Done  bool  `json:"done"`
	Files int   `json:"files" jsonschema:"agent files indexed (binary files left out)"`
	Bytes int64 `json:"bytes" jsonschema:"bytes of them read"`
}

func (s *Server) runInfo(ctx context.Context, _ runInfoInput) (runInfoOutput, string, error) {
	info, err := s.eng.Info(ctx)
	if err != nil {
		return runInfoOutput{}, "", err
	}
	out := runInfoOutput{
		Root: info.Root, Agents: nonNil(info.Agents), Episodes: make([]episodeInfo, 0, len(info.Episodes)),
		Indexing: indexingInfo{Done: info.Indexing.Done, Files: info.Indexing.Files, Bytes: info.Indexing.Bytes},
	}
	for _, e := range info.Episodes {
		out.Episodes = append(out.Episodes, episodeInfo{Episode: e.Episode, Agents: nonNil(e.Agents), Conversations: nonNil(e.Conversations)})
	}
	return out, renderInfo(s.eng.Root(), info), nil
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
