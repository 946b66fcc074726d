package store

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Benchmarks of the store on a blob set of STORE_BENCH_MB megabytes
// (default 500) in ten blobs:
//
//	go test -run XXX -bench . -benchtime 3x ./internal/store
//
// BenchmarkOpen shows opening is O(manifest) with VerifyFrame (the same
// time at a tenth of the bytes) and what VerifyFull's checksums add.

const benchBlobs = 10

func benchBytes() int {
	if mb, err := strconv.Atoi(os.Getenv("STORE_BENCH_MB")); err == nil && mb > 0 {
		return mb << 20
	}
	return 500 << 20
}

// writeSet writes and commits total bytes in benchBlobs blobs.
func writeSet(b *testing.B, e *Entry, total int) {
	chunk := genContent(9, 0, 1<<20)
	var refs []BlobRef
	for i := 0; i < benchBlobs; i++ {
		w, err := e.CreateBlob()
		if err != nil {
			b.Fatal(err)
		}
		for n := 0; n < total/benchBlobs; n += len(chunk) {
			w.Write(chunk[:min(len(chunk), total/benchBlobs-n)])
		}
		ref, err := w.Commit()
		if err != nil {
			b.Fatal(err)
		}
		refs = append(refs, ref)
	}
	s, err := e.Commit(refs, make([]byte, 4096))
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
}

func BenchmarkWrite(b *testing.B) {
	total := benchBytes()
	run, root := testRun(b)
	b.SetBytes(int64(total))
	for i := 0; i < b.N; i++ {
		e, err := root.Open(run, []byte(fmt.Sprint(i)), Options{})
		if err != nil {
			b.Fatal(err)
		}
		writeSet(b, e, total)
		e.Close()
		b.StopTimer()
		root.Remove(e.Key())
		b.StartTimer()
	}
}

func BenchmarkOpen(b *testing.B) {
	for _, total := range []int{benchBytes() / 10, benchBytes()} {
		b.Run(fmt.Sprintf("%dMB", total>>20), func(b *testing.B) {
			run, root := testRun(b)
			e := openEntry(b, root, run, Options{})
			writeSet(b, e, total)
			e.Close()
			for _, v := range []struct {
				name string
				mode VerifyMode
			}{{"frame", VerifyFrame}, {"full", VerifyFull}} {
				b.Run(v.name, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						e, err := root.Open(run, []byte("config"), Options{Verify: v.mode})
						if err != nil {
							b.Fatal(err)
						}
						s, err := e.Snapshot()
						if err != nil || s == nil || len(s.Blobs()) != benchBlobs {
							b.Fatalf("%v %v", s, err)
						}
						s.Close()
						e.Close()
					}
				})
			}
		})
	}
}

// BenchmarkRead reads a 64 MiB blob whole, eight bytes at a time, from its
// mapping (warm in the page cache) and from a heap copy.
func BenchmarkRead(b *testing.B) {
	run, root := testRun(b)
	e := openEntry(b, root, run, Options{})
	data := genContent(3, 0, 64<<20)
	ref := writeBlob(b, e, data)
	s, err := e.Commit([]BlobRef{ref}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	heap, err := os.ReadFile(filepath.Join(e.Dir(), ref.Name))
	if err != nil {
		b.Fatal(err)
	}
	heap = heap[blobHeaderSize : blobHeaderSize+len(data)]
	sum := func(p []byte) (x uint64) {
		for i := 0; i+8 <= len(p); i += 8 {
			x += binary.LittleEndian.Uint64(p[i:])
		}
		return x
	}
	want := sum(heap)
	b.Run("mapped", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			var got uint64
			s.Blob(ref.Name).Access(func(c []byte) error { got = sum(c); return nil })
			if got != want {
				b.Fatal("sum differs")
			}
		}
	})
	b.Run("heap", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			if sum(heap) != want {
				b.Fatal("sum differs")
			}
		}
	})
}

// BenchmarkChecksum: why CRC-32C (the CPU's CRC32 instruction) over IEEE.
func BenchmarkChecksum(b *testing.B) {
	p := genContent(4, 0, 1<<20)
	for _, c := range []struct {
		name  string
		table *crc32.Table
	}{{"castagnoli", castagnoli}, {"ieee", crc32.IEEETable}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for i := 0; i < b.N; i++ {
				crc32.Checksum(p, c.table)
			}
		})
	}
}
