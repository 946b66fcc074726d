package mcpserver_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runls/retriever"
)

// BenchmarkSearchTool is a search through the SDK (client, in-memory
// transport, server, schema validation, text rendering) against the same
// search of the engine: the SDK's cost per call. Compare the two ns/op in
// one run.
func BenchmarkSearchTool(b *testing.B) {
	root := sampleRun(b)
	req := retriever.Request{Query: "deploy database migration", Episode: "episode-2", Conversation: "conv-1", TopK: 10}
	b.Run("engine", func(b *testing.B) {
		ix, err := retriever.Open(context.Background(), retriever.Options{Root: root})
		if err != nil {
			b.Fatal(err)
		}
		defer ix.Close()
		for b.Loop() {
			if _, err := ix.Search(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tool", func(b *testing.B) {
		cs := start(b, root, startOpts{})
		params := &mcp.CallToolParams{Name: "search", Arguments: map[string]any{
			"query": req.Query, "episode": req.Episode, "conversation": req.Conversation, "topK": req.TopK,
		}}
		for b.Loop() {
			if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}
