package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"runls/fleet"
	"runls/retriever"
)

// cannedStore answers one candidate record, whatever is asked.
type cannedStore struct{}

func (cannedStore) Ship(context.Context, fleet.Batch) error { return errors.New("read only") }
func (cannedStore) Tallied(context.Context, string, string) (bool, error) {
	return false, nil
}
func (cannedStore) Statistics(_ context.Context, q fleet.StatsQuery) (fleet.Stats, error) {
	df := make([]int64, len(q.Terms))
	for i := range df {
		df[i] = 1
	}
	return fleet.Stats{Pieces: 10, Tokens: 40, DF: df, HasAgent: true, HasEpisode: true, HasConversation: true}, nil
}
func (cannedStore) Candidates(context.Context, fleet.CandidateQuery) ([]fleet.Entry, string, error) {
	text := "the billing deploy failed"
	return []fleet.Entry{{Run: "r7", Episode: "episode-2", Agent: "alice", Path: "episode-2/alice/notes.md", Text: text,
		Reading: retriever.ReadingNote, Pieces: []retriever.ShipPiece{{Line: 3, TextEnd: len(text), ByteEnd: len(text), CharEnd: len(text)}}}}, "", nil
}
func (cannedStore) Held(context.Context, []string) (map[string]fleet.Held, error) { return nil, nil }
func (cannedStore) RecordIDs(context.Context, string, string, int64) (map[string]bool, error) {
	return nil, nil
}
func (cannedStore) Paths(context.Context, string) (map[string]bool, error) { return nil, nil }
func (cannedStore) Agents(context.Context, []string) ([]string, error)     { return []string{"alice"}, nil }

// TestMCPFleetEngine: runls mcp --fleet's engine answers the search tool
// with items that name their run, and says the file tools are not served.
func TestMCPFleetEngine(t *testing.T) {
	eng := &fleetEngine{url: "http://store", searcher: &fleet.Searcher{Store: cannedStore{}}}
	res, err := eng.Search(context.Background(), retriever.Request{Query: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 || res.Items[0].File != "r7/episode-2/alice/notes.md" || res.Items[0].Location.Range.Start.Line != 3 {
		t.Fatalf("items %+v", res.Items)
	}
	if _, err := eng.Records(context.Background(), retriever.RecordsRequest{}); err == nil || !strings.Contains(err.Error(), "search only") {
		t.Errorf("records over the fleet: %v", err)
	}
	info, err := eng.Info(context.Background())
	if err != nil || info.Root != "http://store" || len(info.Agents) != 1 {
		t.Errorf("info %+v, %v", info, err)
	}
}
