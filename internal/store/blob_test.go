package store

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

func TestBlobRoundTrip(t *testing.T) {
	for _, mode := range []ReadMode{ReadMap, ReadHeap, ReadMapAligned} {
		for _, size := range []int{0, 1, 63, 4095, 4096, 4097, 1<<20 + 3, hugeSize, 3*hugeSize + 5} {
			t.Run(fmt.Sprintf("mode%d/%d", mode, size), func(t *testing.T) {
				run, root := testRun(t)
				e := openEntry(t, root, run, Options{Read: mode})
				data := genContent(1, size, size)
				ref := writeBlob(t, e, data)
				if ref.Length != int64(size) || ref.Checksum != crc32.Checksum(data, castagnoli) {
					t.Fatalf("ref %+v", ref)
				}
				s, err := e.Commit([]BlobRef{ref}, []byte("caller"))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				b := s.Blob(ref.Name)
				if !bytes.Equal(b.Bytes(), data) || b.Mapped() != (mode != ReadHeap) {
					t.Fatalf("content differs or mapped=%v", b.Mapped())
				}
				if size > 0 && uintptrOf(b.Bytes())%64 != 0 && b.Mapped() {
					t.Errorf("content not 64-byte aligned")
				}
				if err := b.Verify(); err != nil {
					t.Fatal(err)
				}
				fi, err := os.Stat(filepath.Join(e.Dir(), ref.Name))
				if err != nil || fi.Mode().Perm() != 0o600 {
					t.Fatalf("blob file: %v %v", fi.Mode(), err)
				}
			})
		}
	}
}

// TestCheckFrame: every field of the frame is checked, each failure is
// ErrCorrupt (or ErrFormat), and a good frame passes.
func TestCheckFrame(t *testing.T) {
	content := []byte("some content of a blob")
	ref := BlobRef{Name: newBlobName(), Length: int64(len(content)), Checksum: crc32.Checksum(content, castagnoli)}
	good := make([]byte, blobHeaderSize+len(content)+blobFooterSize)
	putHeader(good, ref.Length)
	copy(good[blobHeaderSize:], content)
	putFooter(good[blobHeaderSize+len(content):], ref.Length, ref.Checksum)
	if err := checkFrame(good, ref); err != nil {
		t.Fatal(err)
	}
	if err := checkContent(good[blobHeaderSize:blobHeaderSize+len(content)], ref); err != nil {
		t.Fatal(err)
	}
	// A byte flipped in the header or footer is caught by the frame; in
	// the content, by the content check.
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 0x10
		frameErr := checkFrame(bad, ref)
		contentErr := checkContent(bad[blobHeaderSize:blobHeaderSize+len(content)], ref)
		inContent := i >= blobHeaderSize && i < blobHeaderSize+len(content)
		switch {
		case inContent && contentErr == nil:
			t.Errorf("byte %d: content flip not caught", i)
		case !inContent && frameErr == nil:
			t.Errorf("byte %d: frame flip not caught", i)
		}
		if frameErr != nil && !errors.Is(frameErr, ErrCorrupt) && !errors.Is(frameErr, ErrFormat) {
			t.Errorf("byte %d: %v is neither ErrCorrupt nor ErrFormat", i, frameErr)
		}
	}
	for _, n := range []int{0, 1, blobHeaderSize, len(good) - 1} {
		if err := checkFrame(good[:n], ref); !errors.Is(err, ErrCorrupt) {
			t.Errorf("cut to %d: %v", n, err)
		}
	}
	other := ref
	other.Checksum++
	if err := checkFrame(good, other); !errors.Is(err, ErrCorrupt) {
		t.Errorf("manifest checksum differs: %v", err)
	}
}

func TestBlobNames(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		n := newBlobName()
		if !validBlobName(n) || seen[n] {
			t.Fatalf("%q", n)
		}
		seen[n] = true
	}
	for _, bad := range []string{"", "manifest", "lock", "b-.blob", "../b-000000000000000000000000.blob", "b-00000000000000000000000G.blob", "b-000000000000000000000000.blobx", "tmp-000000000000000000000000"} {
		if validBlobName(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBlobAbort(t *testing.T) {
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{})
	w, err := e.CreateBlob()
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("abc"))
	w.Abort()
	ents, _ := os.ReadDir(e.Dir())
	for _, d := range ents {
		if d.Name() != lockName {
			t.Errorf("left %s", d.Name())
		}
	}
	if _, err := w.Commit(); err == nil {
		t.Error("commit after abort")
	}
}
