package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// testRun makes a run folder and a cache root in the test's temp folder.
func testRun(t testing.TB) (run string, root *Root) {
	t.Helper()
	tmp := t.TempDir()
	run = filepath.Join(tmp, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := OpenRoot(filepath.Join(tmp, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	return run, root
}

func openEntry(t testing.TB, root *Root, run string, opts Options) *Entry {
	t.Helper()
	e, err := root.Open(run, []byte("config"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// writeBlob writes data as a new blob of e.
func writeBlob(t testing.TB, e *Entry, data []byte) BlobRef {
	t.Helper()
	w, err := e.CreateBlob()
	if err != nil {
		t.Fatal(err)
	}
	// In uneven pieces, as a serialiser would write.
	for p := data; len(p) > 0; {
		n := min(len(p), 1+len(p)/3)
		if _, err := w.Write(p[:n]); err != nil {
			t.Fatal(err)
		}
		p = p[n:]
	}
	ref, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// genContent is the content of blob i of generation gen: checkable from
// (gen, i) alone, so a test or a helper process can tell a blob of the
// wrong commit.
func genContent(gen uint64, i int, size int) []byte {
	r := rand.New(rand.NewPCG(gen, uint64(i)))
	b := make([]byte, size)
	for j := 0; j+8 <= len(b); j += 8 {
		binary.LittleEndian.PutUint64(b[j:], r.Uint64())
	}
	return b
}

// genCaller is the caller section of generation gen: the gen, the blob
// count and sizes, so a snapshot can be checked whole.
func genCaller(gen uint64, sizes []int) []byte {
	b := binary.AppendUvarint(nil, gen)
	for _, s := range sizes {
		b = binary.AppendUvarint(b, uint64(s))
	}
	return b
}

// checkGen checks that a snapshot is one whole generation of genCaller and
// genContent.
func checkGen(t testing.TB, s *Snapshot) uint64 {
	t.Helper()
	gen, err := genOf(s)
	if err != nil {
		t.Fatal(err)
	}
	return gen
}

func genOf(s *Snapshot) (uint64, error) {
	c, err := s.Caller()
	if err != nil {
		return 0, err
	}
	gen, n := binary.Uvarint(c)
	if n <= 0 {
		return 0, fmt.Errorf("caller section %q", c)
	}
	c = c[n:]
	blobs := s.Blobs()
	for i := 0; len(c) > 0; i++ {
		size, n := binary.Uvarint(c)
		c = c[n:]
		if i >= len(blobs) {
			return gen, fmt.Errorf("generation %d: %d blobs, caller names more", gen, len(blobs))
		}
		err := blobs[i].Access(func(got []byte) error {
			if !bytes.Equal(got, genContent(gen, i, int(size))) {
				return fmt.Errorf("generation %d blob %d: wrong content", gen, i)
			}
			return nil
		})
		if err != nil {
			return gen, err
		}
	}
	return gen, nil
}

// commitGen writes and commits one generation: sizes vary with it.
func commitGen(t testing.TB, e *Entry, gen uint64, blobs int) *Snapshot {
	t.Helper()
	s, err := commitGenErr(e, gen, blobs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func commitGenErr(e *Entry, gen uint64, blobs int) (*Snapshot, error) {
	var refs []BlobRef
	var sizes []int
	for i := 0; i < blobs; i++ {
		size := int((gen*7919+uint64(i)*104729)%(256<<10)) &^ 7
		w, err := e.CreateBlob()
		if err != nil {
			return nil, err
		}
		data := genContent(gen, i, size)
		// In uneven pieces, as a serialiser would write.
		for p := data; len(p) > 0; {
			n := min(len(p), 1+len(p)/3)
			if _, err := w.Write(p[:n]); err != nil {
				return nil, err
			}
			p = p[n:]
		}
		ref, err := w.Commit()
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
		sizes = append(sizes, size)
	}
	return e.Commit(refs, genCaller(gen, sizes))
}

func putUint64(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }
func putUint32(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }
func crc32c(b []byte) uint32       { return crc32.Checksum(b, castagnoli) }

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }
