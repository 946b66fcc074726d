// This file holds the file table of spec §15 and issue 18 — what the
// retriever knew of each agent file when it committed — and its encoding,
// for the manifest's caller section.

package store

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// FileRecord is one agent file as indexed at a commit. Reopening compares
// it with the file now: same identity and fingerprints, not read; grown with
// the same Head and Tail, read from IndexedTo with Carry; anything else,
// read again.
type FileRecord struct {
	Path      string // relative to the run folder, slash-separated (ValidFilePath)
	Dev, Ino  uint64 // the file's identity
	Size      int64  // bytes when indexed
	ModTime   int64  // modification time, Unix nanoseconds
	IndexedTo int64  // the offset indexed to (≤ Size)
	Head      Fingerprint
	Tail      Fingerprint // of the Tail.Len bytes ending at IndexedTo
	Carry     []byte      // the parser's carry-over state at IndexedTo, opaque here
}

// ValidFilePath reports whether p is a path as a file table keeps one:
// relative to the run folder, slash-separated, each element neither empty
// nor "." nor "..", and no NUL. Its elements are otherwise the file names'
// own bytes: unlike fs.ValidPath it does not ask for UTF-8, because a Linux
// file name is bytes, and one name that is not UTF-8 left its whole run
// without a cache entry (every command indexed it afresh, with a warning).
func ValidFilePath(p string) bool {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	for elem := range strings.SplitSeq(p, "/") {
		if elem == "" || elem == "." || elem == ".." {
			return false
		}
	}
	return true
}

// Fingerprint is a hash of Len bytes of a file. Its zero value is the
// fingerprint of no bytes.
type Fingerprint struct {
	Len uint32
	Sum [16]byte // SHA-256, truncated
}

// FingerprintOf is the fingerprint of p. SHA-256 rather than a CRC: a file
// rewritten with the same size and mtime must not pass as unchanged by
// chance (a stale answer), and with the CPU's SHA extensions it hashes the
// few KiB at each end of a file in microseconds.
func FingerprintOf(p []byte) Fingerprint {
	if len(p) == 0 {
		return Fingerprint{}
	}
	sum := sha256.Sum256(p)
	f := Fingerprint{Len: uint32(len(p))}
	copy(f.Sum[:], sum[:])
	return f
}

// fileTableVersion is the first byte of an encoded table.
const fileTableVersion = 1

// EncodeFileTable serialises the records, sorted by path (the input is not
// changed). Paths are stored as the bytes they share with the previous path
// and the rest: a run's paths share long prefixes (episode-N/agent/).
// A record that breaks FileRecord's rules is an error, as is a path twice.
func EncodeFileTable(records []FileRecord) ([]byte, error) {
	sorted := slices.Clone(records)
	slices.SortFunc(sorted, func(a, b FileRecord) int { return cmp.Compare(a.Path, b.Path) })
	out := []byte{fileTableVersion}
	out = binary.AppendUvarint(out, uint64(len(sorted)))
	prev := ""
	for i := range sorted {
		r := &sorted[i]
		if err := r.check(); err != nil {
			return nil, err
		}
		if i > 0 && r.Path == prev {
			return nil, fmt.Errorf("store: file table: %q twice", r.Path)
		}
		shared := sharedPrefix(prev, r.Path)
		out = binary.AppendUvarint(out, uint64(shared))
		out = appendBytes(out, []byte(r.Path[shared:]))
		out = binary.AppendUvarint(out, r.Dev)
		out = binary.AppendUvarint(out, r.Ino)
		out = binary.AppendUvarint(out, uint64(r.Size))
		out = binary.AppendVarint(out, r.ModTime)
		out = binary.AppendUvarint(out, uint64(r.IndexedTo))
		out = appendFingerprint(out, r.Head)
		out = appendFingerprint(out, r.Tail)
		out = appendBytes(out, r.Carry)
		prev = r.Path
	}
	return out, nil
}

// DecodeFileTable parses a table EncodeFileTable wrote. Every record is
// checked as EncodeFileTable checks it, and paths must come strictly in
// order, so a corrupt table is refused rather than read as another one
// (a path outside the run, an offset past the file's end).
func DecodeFileTable(b []byte) ([]FileRecord, error) {
	if len(b) == 0 || b[0] != fileTableVersion {
		return nil, fmt.Errorf("%w: file table version", ErrFormat)
	}
	d := decoder{b: b[1:]}
	count := d.uvarint()
	// A record takes at least 10 bytes; a larger count is corrupt.
	if d.err != nil || count > uint64(len(d.b))/10 {
		return nil, fmt.Errorf("%w: file table of %d records in %d bytes", ErrCorrupt, count, len(d.b))
	}
	records := make([]FileRecord, 0, count)
	prev := ""
	for i := uint64(0); i < count; i++ {
		shared := d.uvarint()
		rest := d.bytes()
		if d.err == nil && shared > uint64(len(prev)) {
			return nil, fmt.Errorf("%w: file table record %d shares %d bytes of a %d-byte path", ErrCorrupt, i, shared, len(prev))
		}
		var r FileRecord
		if d.err == nil {
			r.Path = prev[:shared] + string(rest)
		}
		r.Dev = d.uvarint()
		r.Ino = d.uvarint()
		r.Size = int64(d.uvarint())
		r.ModTime = d.varint()
		r.IndexedTo = int64(d.uvarint())
		r.Head = d.fingerprint()
		r.Tail = d.fingerprint()
		r.Carry = bytes.Clone(d.bytes())
		if d.err != nil {
			return nil, fmt.Errorf("%w: file table record %d: %v", ErrCorrupt, i, d.err)
		}
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("%w: file table record %d: %v", ErrCorrupt, i, err)
		}
		if i > 0 && r.Path <= prev {
			return nil, fmt.Errorf("%w: file table record %d out of order", ErrCorrupt, i)
		}
		records = append(records, r)
		prev = r.Path
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the file table", ErrCorrupt, len(d.b))
	}
	return records, nil
}

// check is FileRecord's rules.
func (r *FileRecord) check() error {
	switch {
	case !ValidFilePath(r.Path):
		return fmt.Errorf("store: file table: bad path %q", r.Path)
	case r.Size < 0 || r.IndexedTo < 0 || r.IndexedTo > r.Size:
		return fmt.Errorf("store: file table: %q: indexed to %d of %d bytes", r.Path, r.IndexedTo, r.Size)
	case int64(r.Head.Len) > r.IndexedTo || int64(r.Tail.Len) > r.IndexedTo:
		return fmt.Errorf("store: file table: %q: fingerprints of %d and %d bytes past offset %d", r.Path, r.Head.Len, r.Tail.Len, r.IndexedTo)
	case r.Head.Len == 0 && r.Head.Sum != [16]byte{} || r.Tail.Len == 0 && r.Tail.Sum != [16]byte{}:
		return fmt.Errorf("store: file table: %q: fingerprint of no bytes", r.Path)
	}
	return nil
}

func appendFingerprint(b []byte, f Fingerprint) []byte {
	b = binary.AppendUvarint(b, uint64(f.Len))
	if f.Len == 0 {
		return b
	}
	return append(b, f.Sum[:]...)
}

func (d *decoder) fingerprint() Fingerprint {
	n := d.uvarint()
	if n == 0 {
		return Fingerprint{}
	}
	if n > 1<<32-1 {
		d.fail(fmt.Errorf("fingerprint of %d bytes", n))
		return Fingerprint{}
	}
	f := Fingerprint{Len: uint32(n)}
	copy(f.Sum[:], d.take(16))
	return f
}

func sharedPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
