package bm25

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
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
// dictionary, a block of 64 queries each in turn, the first changing each
// iteration, so that all see the machine in one state: the median ns of a
// query of four terms on each.
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
	lookups := []func([]string) []uint32{
		func(q []string) []uint32 {
			ids := make([]uint32, 0, len(q))
			for _, n := range q {
				if id, ok := ref.ids[n]; ok {
					ids = append(ids, id)
				}
			}
			return ids
		},
		heap.Lookup, mapped.Lookup,
	}
	const block = 64
	alternate(b, []string{"map", "heap", "mapped"}, block, func(v, i int) {
		for j := range block {
			runtime.KeepAlive(lookups[v](queries[(i*block+j)%len(queries)]))
		}
	})
}

// BenchmarkDictAssign assigns batches of 16,384 terms, one in twenty new, as
// a builder's batch is, to each dictionary in turn: the median ns per term
// on each.
func BenchmarkDictAssign(b *testing.B) {
	const batch = 1 << 14
	terms, ref, heap, mapped := benchDicts(b, benchDictTerms(b))
	r := rand.New(rand.NewPCG(9, 10))
	tables := make([]*TermTable, 64)
	for round := range tables {
		names := make([]string, batch)
		for i := range names {
			if i%20 == 0 {
				names[i] = fmt.Sprintf("new%d_%d", round, i)
			} else {
				names[i] = terms[r.IntN(len(terms))]
			}
		}
		tables[round] = tableOf(names)
	}
	assign := []func(*TermTable) []uint32{ref.assign, heap.Assign, mapped.Assign}
	alternate(b, []string{"map", "heap", "mapped"}, batch, func(v, i int) {
		runtime.KeepAlive(assign[v](tables[i%len(tables)]))
	})
}

// alternate runs each variant once an iteration, the first changing each
// iteration, and reports each one's median ns per unit (of per units).
func alternate(b *testing.B, names []string, per int, run func(variant, iteration int)) {
	took := make([][]time.Duration, len(names))
	i := 0
	for b.Loop() {
		for k := range names {
			v := (i + k) % len(names)
			start := time.Now()
			run(v, i)
			took[v] = append(took[v], time.Since(start))
		}
		i++
	}
	for v, name := range names {
		slices.Sort(took[v])
		b.ReportMetric(float64(took[v][len(took[v])/2].Nanoseconds())/float64(per), "ns-median-"+name)
	}
}
