// This file holds the blob format: an immutable file of caller bytes framed
// by a header (magic, format version, length) and a footer (the content's
// CRC-32C), and the writer that streams one into place.

package store

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
)

// BlobRef names a committed blob and what its content must be: the
// manifest holds one per blob, and opening a blob checks the file against it.
type BlobRef struct {
	Name     string // file name inside the entry's folder, e.g. "b-0123….blob"
	Length   int64  // content bytes, without header and footer
	Checksum uint32 // CRC-32C (Castagnoli) of the content
	// Chunks is the CRC-32C of each ChunkSize bytes of the content in turn
	// (the last chunk may be shorter), 4 bytes each, little-endian: what
	// Blob.CheckRange checks a part of the content against. "" when the
	// manifest that named the blob had none (format 1): a range check is
	// then the whole blob's. A string, so that a BlobRef stays comparable.
	Chunks string
}

// ChunkSize is the grain of Blob.CheckRange: 64 KiB, so that checking the
// few pages an answer reads costs microseconds, and a blob's sums (4 bytes
// a chunk, in the manifest) are 1/16384 of it.
const ChunkSize = 64 << 10

// chunkCount is how many chunks content of length bytes has.
func chunkCount(length int64) int64 { return (length + ChunkSize - 1) / ChunkSize }

// chunkSum is the i-th chunk's CRC-32C in ref.
func (ref BlobRef) chunkSum(i int64) uint32 {
	return binary.LittleEndian.Uint32([]byte(ref.Chunks[4*i : 4*i+4]))
}

// BlobWriter streams the content of a new blob to a temporary file. Commit
// makes it a blob of the entry (still unnamed by any manifest until
// Entry.Commit names it); Abort removes it.
type BlobWriter struct {
	e   *Entry
	f   *os.File
	tmp string
	buf *bufio.Writer
	crc hash.Hash32
	n   int64
	// chunks are the sums of the content's whole chunks so far, chunk the
	// one under way's
	chunks []byte
	chunk  uint32
	done   bool
	lazy   bool // CommitUnsynced: the fsync is the naming commit's
}

// Write appends content.
func (w *BlobWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, errors.New("store: write to a finished blob")
	}
	n, err := w.buf.Write(p)
	w.crc.Write(p[:n])
	for q := p[:n]; len(q) > 0; {
		k := min(int64(len(q)), ChunkSize-w.n%ChunkSize)
		w.chunk = crc32.Update(w.chunk, castagnoli, q[:k])
		w.n += k
		q = q[k:]
		if w.n%ChunkSize == 0 {
			w.chunks = binary.LittleEndian.AppendUint32(w.chunks, w.chunk)
			w.chunk = 0
		}
	}
	return n, err
}

// Commit writes the footer and the header's length, fsyncs the file and
// renames it to its final name. The blob is durable once a later
// Entry.Commit (which fsyncs the folder) names it.
func (w *BlobWriter) Commit() (BlobRef, error) {
	if w.done {
		return BlobRef{}, errors.New("store: blob already finished")
	}
	w.done = true
	if w.n%ChunkSize != 0 {
		w.chunks = binary.LittleEndian.AppendUint32(w.chunks, w.chunk)
	}
	ref := BlobRef{Name: newBlobName(), Length: w.n, Checksum: w.crc.Sum32(), Chunks: string(w.chunks)}
	err := w.finish(ref)
	if err != nil {
		w.f.Close()
		os.Remove(w.tmp)
		return BlobRef{}, fmt.Errorf("store: write blob: %w", err)
	}
	w.e.addPending(ref, w.lazy)
	return ref, nil
}

// CommitUnsynced is Commit without the file's fsync, which the first
// Entry.Commit naming the blob makes before its manifest: a writer that
// writes blobs long before it commits (a segment flushed as it is built)
// does not wait for the disk on each, and the commit point still comes
// after every blob it names is durable.
func (w *BlobWriter) CommitUnsynced() (BlobRef, error) {
	w.lazy = true
	return w.Commit()
}

// Abort drops the unfinished blob.
func (w *BlobWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.f.Close()
	os.Remove(w.tmp)
}

func (w *BlobWriter) finish(ref BlobRef) error {
	var foot [blobFooterSize]byte
	putFooter(foot[:], ref.Length, ref.Checksum)
	if _, err := w.buf.Write(foot[:]); err != nil {
		return err
	}
	if err := w.buf.Flush(); err != nil {
		return err
	}
	var head [blobHeaderSize]byte
	putHeader(head[:], ref.Length)
	if _, err := w.f.WriteAt(head[:], 0); err != nil {
		return err
	}
	if !w.lazy {
		if err := w.f.Sync(); err != nil {
			return err
		}
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	return os.Rename(w.tmp, filepath.Join(w.e.dir, ref.Name))
}

// Blob format. The content starts at a 64-byte boundary so that a caller
// may read fixed-width integers from a mapping at aligned offsets.
const (
	blobMagic       = "runlsBLB"
	blobFooterMagic = "bEND"
	blobVersion     = 1
	blobHeaderSize  = 64
	blobFooterSize  = 16
	blobSuffix      = ".blob"
	blobPrefix      = "b-"
	tmpPrefix       = "tmp-"
	blobWriteBuffer = 1 << 20
)

// castagnoli is CRC-32C: in the standard library, computed with the CPU's
// CRC32 instruction on amd64 and arm64 (BenchmarkChecksum: several times
// IEEE's speed here), and what ext4, btrfs, iSCSI and LevelDB use to catch
// torn and flipped bytes. It is not a defence against an adversary: one who
// can write the 0700 cache folder can write anything.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// putHeader fills a blob header: magic, version, content length, and a
// CRC-32C of those so that a flipped length is told apart from a torn file.
func putHeader(b []byte, length int64) {
	clear(b[:blobHeaderSize])
	copy(b, blobMagic)
	binary.LittleEndian.PutUint32(b[8:], blobVersion)
	binary.LittleEndian.PutUint64(b[16:], uint64(length))
	binary.LittleEndian.PutUint32(b[24:], crc32.Checksum(b[:24], castagnoli))
}

func putFooter(b []byte, length int64, sum uint32) {
	binary.LittleEndian.PutUint64(b, uint64(length))
	binary.LittleEndian.PutUint32(b[8:], sum)
	copy(b[12:], blobFooterMagic)
}

// checkFrame checks a whole blob file's header and footer against ref
// without reading the content: O(1), the check every open makes.
func checkFrame(file []byte, ref BlobRef) error {
	if int64(len(file)) != blobHeaderSize+ref.Length+blobFooterSize {
		return fmt.Errorf("%w: %d bytes, want %d", errTruncated, len(file), blobHeaderSize+ref.Length+blobFooterSize)
	}
	h := file[:blobHeaderSize]
	if string(h[:8]) != blobMagic {
		return fmt.Errorf("%w: not a blob (bad magic)", ErrCorrupt)
	}
	if crc32.Checksum(h[:24], castagnoli) != binary.LittleEndian.Uint32(h[24:]) {
		return fmt.Errorf("%w: header checksum", ErrCorrupt)
	}
	for _, c := range h[12:16] {
		if c != 0 {
			return fmt.Errorf("%w: header flags", ErrCorrupt)
		}
	}
	for _, c := range h[28:] {
		if c != 0 {
			return fmt.Errorf("%w: header padding", ErrCorrupt)
		}
	}
	if v := binary.LittleEndian.Uint32(h[8:]); v != blobVersion {
		return fmt.Errorf("%w: blob format %d, want %d", ErrFormat, v, blobVersion)
	}
	if n := binary.LittleEndian.Uint64(h[16:]); n != uint64(ref.Length) {
		return fmt.Errorf("%w: header length %d, manifest %d", ErrCorrupt, n, ref.Length)
	}
	f := file[len(file)-blobFooterSize:]
	if string(f[12:]) != blobFooterMagic || binary.LittleEndian.Uint64(f) != uint64(ref.Length) {
		return fmt.Errorf("%w: footer", ErrCorrupt)
	}
	if sum := binary.LittleEndian.Uint32(f[8:]); sum != ref.Checksum {
		return fmt.Errorf("%w: footer checksum %08x, manifest %08x", ErrCorrupt, sum, ref.Checksum)
	}
	return nil
}

// checkContent computes the content's CRC-32C: O(bytes), at memory speed.
func checkContent(content []byte, ref BlobRef) error {
	if sum := crc32.Checksum(content, castagnoli); sum != ref.Checksum {
		return fmt.Errorf("%w: content checksum %08x, want %08x", ErrCorrupt, sum, ref.Checksum)
	}
	return nil
}

// checkChunk computes the CRC-32C of chunk i of the content: O(ChunkSize).
func checkChunk(content []byte, ref BlobRef, i int64) error {
	lo, hi := i*ChunkSize, min((i+1)*ChunkSize, ref.Length)
	if sum, want := crc32.Checksum(content[lo:hi], castagnoli), ref.chunkSum(i); sum != want {
		return fmt.Errorf("%w: checksum of bytes %d-%d %08x, want %08x", ErrCorrupt, lo, hi, sum, want)
	}
	return nil
}

// newBlobName is a fresh random name: 96 bits, so two writers' blobs (one
// crashed, one live) never share a name, and a name never comes back.
func newBlobName() string {
	var b [12]byte
	rand.Read(b[:])
	return blobPrefix + hex.EncodeToString(b[:]) + blobSuffix
}

// validBlobName reports whether name is one newBlobName makes: the
// manifest decoder refuses anything else, so a corrupt manifest cannot name
// a path outside the entry's folder.
func validBlobName(name string) bool {
	hexPart, ok := strings.CutPrefix(name, blobPrefix)
	if !ok {
		return false
	}
	hexPart, ok = strings.CutSuffix(hexPart, blobSuffix)
	if !ok || len(hexPart) != 24 {
		return false
	}
	for _, c := range []byte(hexPart) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
