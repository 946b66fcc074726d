package bm25

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// benchDictTerms is the dictionary's size in the benchmarks:
// RUNLS_DICT_TERMS, default 1<<20 (the 1 GB generated run has 388,733
// terms: BenchmarkDictOfRun in retriever).
func benchDictTerms(b *testing.B) int {
	if s := os.Getenv("RUNLS_DICT_TERMS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("RUNLS_DICT_TERMS: %v", err)
		}
		return n
	}
	return 1 << 20
}

// benchDicts builds a dictionary of n distinct run-like terms three ways:
// the Go map it was, the heap table, and that table encoded and decoded
// (its lookups read the encoded bytes, as a mapping's).
func benchDicts(b *testing.B, n int) (terms []string, ref *mapDict, heap, mapped *Dict) {
	r := rand.New(rand.NewPCG(5, 6))
	seen := map[string]bool{}
	for len(terms) < n {
		for _, t := range randomTerms(r, n) {
			if !seen[t] && len(terms) < n {
				seen[t] = true
				terms = append(terms, t)
			}
		}
		terms = append(terms, fmt.Sprintf("u%d", len(terms)))
	}
	ref, heap = &mapDict{ids: map[string]uint32{}}, NewDict()
	for lo := 0; lo < len(terms); lo += 1 << 16 {
		tab := tableOf(terms[lo:min(lo+1<<16, len(terms))])
		ref.assign(tab)
		heap.Assign(tab)
	}
	mapped, err := DecodeDict(heap.AppendEncoded(nil))
	if err != nil {
		b.Fatal(err)
	}
	return terms, ref, heap, mapped
}

// BenchmarkDictLookup looks up query terms (three in four known) in each
// dictionary; run with -count to alternate them.
func BenchmarkDictLookup(b *testing.B) {
	terms, ref, heap, mapped := benchDicts(b, benchDictTerms(b))
	r := rand.New(rand.NewPCG(7, 8))
	queries := make([][]string, 1024)
	for i := range queries {
		for range 3 {
			queries[i] = append(queries[i], terms[r.IntN(len(terms))])
		}
		queries[i] = append(queries[i], fmt.Sprintf("absent%d", i))
	}
	b.Run("map", func(b *testing.B) {
		i := 0
		for b.Loop() {
			q := queries[i%len(queries)]
			i++
			ids := make([]uint32, 0, len(q))
			for _, n := range q {
				if id, ok := ref.ids[n]; ok {
					ids = append(ids, id)
				}
			}
			runtime.KeepAlive(ids)
		}
	})
	for _, d := range []struct {
		name string
		dc   *Dict
	}{{"heap", heap}, {"mapped", mapped}} {
		b.Run(d.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				runtime.KeepAlive(d.dc.Lookup(queries[i%len(queries)]))
				i++
			}
		})
	}
}

// BenchmarkDictAssign assigns batches of 16,384 terms, one in twenty new, as
// a builder's batch is, to each dictionary: ns per term.
func BenchmarkDictAssign(b *testing.B) {
	const batch = 1 << 14
	terms, ref, heap, mapped := benchDicts(b, benchDictTerms(b))
	r := rand.New(rand.NewPCG(9, 10))
	round := 0
	next := func() *TermTable {
		round++
		names := make([]string, batch)
		for i := range names {
			if i%20 == 0 {
				names[i] = fmt.Sprintf("new%d_%d", round, i)
			} else {
				names[i] = terms[r.IntN(len(terms))]
			}
		}
		return tableOf(names)
	}
	run := func(name string, assign func(*TermTable) []uint32) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				tab := next()
				b.StartTimer()
				runtime.KeepAlive(assign(tab))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/term")
		})
	}
	run("map", ref.assign)
	run("heap", heap.Assign)
	run("mapped", mapped.Assign)
}
