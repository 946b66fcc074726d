package retriever

// This file holds the ranking rules for a ranker outside the index (the
// fleet's, spec §16): the terms of a text, BM25 with the engine's
// parameters and arithmetic, the matches of an item, the evidence rules and
// the location order, each the index's own, so that pieces ranked
// elsewhere get the index's scores to the last bit.

import (
	"fmt"

	"runls/recordformat"
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

// QueryTerms returns the distinct terms of a query (spec §6) in first-seen
// order, the order in which a piece's term scores are added; a query of
// more than MaxQueryTerms is rejected as the index rejects it.
func QueryTerms(text string) ([]string, error) {
	names := bm25.Terms(text)
	if len(names) > MaxQueryTerms {
		return nil, &FieldError{"query", fmt.Sprintf("%d terms", len(names)), fmt.Sprintf("at most %d distinct terms", MaxQueryTerms)}
	}
	return names, nil
}

// PieceTerms returns each term of a piece's text with its count, and the
// piece's length |d| (its number of terms).
func PieceTerms(text string) (tf map[string]int, dl int) {
	var s bm25.Scanner
	tf = map[string]int{}
	s.Each([]byte(text), func(term []byte, _, _ uint64) {
		tf[string(term)]++
		dl++
	})
	return tf, dl
}

// QueryTF counts in a piece's text the terms of a query (idx: a term's
// index in the query) into tf, which it clears first, and returns the
// piece's length |d|.
func QueryTF(text string, idx map[string]int, tf []int) (dl int) {
	clear(tf)
	var s bm25.Scanner
	s.Each([]byte(text), func(term []byte, _, _ uint64) {
		dl++
		if i, ok := idx[string(term)]; ok {
			tf[i]++
		}
	})
	return dl
}

// Scorer scores pieces by BM25 (spec §6) under given statistics: n pieces,
// their terms in all (avgdl = terms/n), and each query term's document
// frequency in pieces, in query order.
type Scorer struct {
	idf   []float64 // by query term; 0 for a term no piece holds
	avgdl float64
}

// NewScorer makes the scorer of a query whose terms have document
// frequencies df, over n pieces that hold terms terms in all.
func NewScorer(n, terms int64, df []int64) *Scorer {
	s := &Scorer{idf: make([]float64, len(df))}
	if n == 0 {
		return s
	}
	s.avgdl = float64(terms) / float64(n)
	for i, d := range df {
		if d > 0 {
			s.idf[i] = bm25.IDF(n, d)
		}
	}
	return s
}

// Score is a piece's score: tf holds the count in the piece of each query
// term (in query order), dl its length. Term scores are added in query
// order, as the engine adds them.
func (s *Scorer) Score(tf []int, dl int) float64 {
	contrib := make([]float64, 0, len(tf))
	for i, f := range tf {
		if f > 0 && s.idf[i] > 0 {
			contrib = append(contrib, bm25.Score(s.idf[i], uint32(f), uint32(dl), s.avgdl))
		}
	}
	return bm25.SumInOrder(contrib)
}

// MatchRanges are an item's matches (spec §9): the UTF-16 ranges within
// text of every occurrence of a term of terms.
func MatchRanges(text string, terms []string) [][2]int {
	set := make(map[string]bool, len(terms))
	for _, t := range terms {
		set[t] = true
	}
	return matchRanges(text, set)
}

// RankingText is the text a request is ranked by: its turn message, else
// its query.
func (r Request) RankingText() string { return r.rankingText() }

// K is the request's topK, or the default.
func (r Request) K() int { return r.topK() }

// Rule reasons: the first of rules 1-4 of spec §5 that keeps a piece out
// (the names of the hover's evidence line, spec §11), or "" when none does.
// file describes the piece's record: its episode folder, whether it is of a
// record file, whether it is unfielded, and its conversation (nil: none).
func (r Request) RuleReason(episode string, recordFile, unfielded bool, conversation *string) string {
	f := &filter{scopeEpisode: r.Scope == "episode", records: r.Episode != "" && r.Conversation != "", allConvs: r.AllConversations}
	if r.Episode != "" {
		f.episode, _ = EpisodeNumber(r.Episode)
	}
	// Conversation ids as the index numbers them: 0 none, then the
	// request's, "-", any other.
	const reqConv, dash, other = 1, 2, 3
	f.conv, f.hasConv, f.dash = reqConv, true, dash
	var conv uint32
	switch {
	case conversation == nil:
	case *conversation == "-":
		conv = dash
	case *conversation == r.Conversation:
		conv = reqConv
	default:
		conv = other
	}
	if r.Conversation == "-" {
		f.conv = dash
	}
	num, _ := EpisodeNumber(episode)
	current := f.episode != "" && num == f.episode
	return ruleReason(f, current, recordFile, unfielded, conv)
}

// CompareEpisodes orders episode folder names by number (episode-2 before
// episode-10), as the location order does.
func CompareEpisodes(a, b string) int {
	na, _ := EpisodeNumber(a)
	nb, _ := EpisodeNumber(b)
	return corpus.CompareEpisodeNumbers(na, nb)
}

// InWindow reports whether a record whose time is written as timeText ("":
// none) is within the request's from and to (spec §5); with neither, every
// record is. The request must be valid.
func (r Request) InWindow(timeText string) bool {
	w, _ := parseTimeWindow(r.From, r.To)
	if !w.on {
		return true
	}
	if timeText == "" {
		return false
	}
	return w.holds(recordformat.TimeKey([]byte(timeText)))
}
