package bm25

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runls/internal/cputime"
)

// BenchmarkBuilderCount tokenizes and counts a batch of documents (the
// builder's Count and Add: the tokenizer and the term table, indexing's
// per-byte cost), one line a document. The text is a run's when
// RUNLS_COUNT_DIR names one (its files read up to 32 MB), else Zipf words.
func BenchmarkBuilderCount(b *testing.B) {
	docs := countDocs(b)
	size := 0
	for _, d := range docs {
		size += len(d)
	}
	b.SetBytes(int64(size))
	cpu0 := cputime.Process()
	for b.Loop() {
		bl := NewBuilder(DefaultLayerMin)
		bl.Reserve(int64(size))
		for i, d := range docs {
			if bl.Count(d) > 0 {
				bl.Add(uint64(i), uint32(i/100), uint32(i/100%7))
			}
		}
		b.ReportMetric(float64(bl.Terms().Len()), "terms")
	}
	// The process's CPU time: on a loaded machine, wall time says how
	// long the benchmark waited for a core.
	if cpu := cputime.Process() - cpu0; cpu > 0 { // 0 where the system does not say
		b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "MB/s-cpu")
	}
}

func countDocs(b *testing.B) [][]byte {
	var text []byte
	if dir := os.Getenv("RUNLS_COUNT_DIR"); dir != "" {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || len(text) > 32<<20 {
				return err
			}
			data, err := os.ReadFile(p)
			text = append(text, data...)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	} else {
		r := rand.New(rand.NewPCG(11, 12))
		words := randomTerms(r, 300000)
		zipf := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
		var sb strings.Builder
		for sb.Len() < 32<<20 {
			for range 5 + r.IntN(25) {
				sb.WriteString(words[zipf.Uint64()])
				sb.WriteByte(' ')
			}
			sb.WriteByte('\n')
		}
		text = []byte(sb.String())
	}
	return bytes.Split(text, []byte("\n"))
}
