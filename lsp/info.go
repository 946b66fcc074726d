package lsp

import (
	"context"

	"go.uber.org/zap"

	"runls/retriever"
)

// InfoParams are the params of run/info: {} for what the run holds, or
// {"episode": "episode-N"} for that and the summaries of that episode's
// conversations (runls' own, for the editors' conversation pickers).
type InfoParams struct {
	Episode *string `json:"episode,omitempty"`
}

// InfoResult is the result of run/info: the engine's Info, and with an
// episode asked, its conversations (the engine's ConversationSummary).
type InfoResult struct {
	retriever.Info
	Conversations []retriever.ConversationSummary `json:"conversations,omitempty"`
}

// RunInfo tells what the run holds. It does not wait for indexing: its
// indexing field says how far that is. An episode asked adds its
// conversations' summaries, from what is indexed so far.
func (h handlers) RunInfo(ctx context.Context, params *InfoParams) (*InfoResult, error) {
	s := h.s
	if params.Episode != nil && *params.Episode != "" {
		if _, ok := retriever.EpisodeNumber(*params.Episode); !ok {
			return nil, requestError(&retriever.FieldError{Field: "episode", Value: *params.Episode, Reason: "want episode-N, N decimal digits"})
		}
	}
	g := s.acquire()
	defer g.release()
	if g == nil || g.engine == nil {
		s.mu.Lock()
		root := s.root
		s.mu.Unlock()
		info := &InfoResult{Info: retriever.Info{Agents: []string{}, Episodes: []retriever.EpisodeInfo{}, Indexing: retriever.IndexingInfo{Done: true}}}
		if root != "" {
			info.Root = retriever.FileURI(root)
		}
		if params.Episode != nil && *params.Episode != "" {
			info.Conversations = []retriever.ConversationSummary{}
		}
		return info, nil
	}
	info, err := g.engine.Info(ctx)
	if err != nil {
		return nil, requestError(err)
	}
	if !g.isReady() {
		s.logger.Info("run/info answered while indexing", zap.Int("files", info.Indexing.Files))
	}
	if info.Agents == nil {
		info.Agents = []string{}
	}
	if info.Episodes == nil {
		info.Episodes = []retriever.EpisodeInfo{}
	}
	for i := range info.Episodes {
		if info.Episodes[i].Agents == nil {
			info.Episodes[i].Agents = []string{}
		}
		if info.Episodes[i].Conversations == nil {
			info.Episodes[i].Conversations = []string{}
		}
	}
	res := &InfoResult{Info: info}
	if params.Episode != nil && *params.Episode != "" {
		if res.Conversations, err = g.engine.Conversations(ctx, *params.Episode); err != nil {
			return nil, requestError(err)
		}
	}
	return res, nil
}
