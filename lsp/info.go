package lsp

import (
	"context"

	"go.uber.org/zap"

	"runls/retriever"
)

// InfoParams are the params of run/info: none ({}).
type InfoParams struct{}

// InfoResult is the result of run/info; the engine's Info has its shape.
type InfoResult = retriever.Info

// RunInfo tells what the run holds. It does not wait for indexing: its
// indexing field says how far that is.
func (h handlers) RunInfo(ctx context.Context, _ *InfoParams) (*InfoResult, error) {
	s := h.s
	g := s.acquire()
	defer g.release()
	if g == nil || g.engine == nil {
		s.mu.Lock()
		root := s.root
		s.mu.Unlock()
		info := &InfoResult{Agents: []string{}, Episodes: []retriever.EpisodeInfo{}, Indexing: retriever.IndexingInfo{Done: true}}
		if root != "" {
			info.Root = retriever.FileURI(root)
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
	return &info, nil
}
