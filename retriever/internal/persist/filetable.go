package persist

// This file holds the file table the index writes into its cache entry
// (spec §15, issue 18): one record a file, as following knows it (§7, the
// retriever's follow.go): identity, size, time, the offset read to,
// fingerprints of the file's first corpus.CheckBytes and of the
// corpus.CheckBytes before that offset as they were when read, and the
// parser's state at the commit position (Carry). The retriever's reopen.go
// classifies a run's files against it.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"runls/internal/store"
	"runls/retriever/internal/corpus"
)

// Carry is the parser's state at a file's commit position, and what the
// reopen needs besides the store's fields: the file table's Carry.
type Carry struct {
	Binary     bool
	InRecord   bool  // a record started before CommitPos
	Pending    int64 // ReadPos - CommitPos: the tail read again when more comes
	CommitLine uint32
	ReadAt     int64 // when the file's content was read (unix ns)
	Ctime      int64 // the inode's change time then (unix ns)
}

const carryVersion = 2

func (c Carry) Encode() []byte {
	flags := byte(0)
	if c.Binary {
		flags |= 1
	}
	if c.InRecord {
		flags |= 2
	}
	b := []byte{carryVersion, flags}
	b = binary.AppendUvarint(b, uint64(c.Pending))
	b = binary.AppendUvarint(b, uint64(c.CommitLine))
	b = binary.AppendVarint(b, c.ReadAt)
	return binary.AppendVarint(b, c.Ctime)
}

func DecodeCarry(b []byte) (Carry, error) {
	bad := func(what string) (Carry, error) {
		return Carry{}, fmt.Errorf("%w: file table carry: %s", store.ErrCorrupt, what)
	}
	if len(b) < 2 || b[0] != carryVersion || b[1]&^3 != 0 {
		return bad("version or flags")
	}
	c := Carry{Binary: b[1]&1 != 0, InRecord: b[1]&2 != 0}
	rest := b[2:]
	pending, n := binary.Uvarint(rest)
	if n <= 0 || pending > 1<<62 {
		return bad("pending")
	}
	rest = rest[n:]
	line, n := binary.Uvarint(rest)
	if n <= 0 || line > 1<<32-1 {
		return bad("line")
	}
	rest = rest[n:]
	at, n := binary.Varint(rest)
	if n <= 0 {
		return bad("time")
	}
	rest = rest[n:]
	ctime, n := binary.Varint(rest)
	if n <= 0 || n != len(rest) {
		return bad("change time")
	}
	c.Pending, c.CommitLine, c.ReadAt, c.Ctime = int64(pending), uint32(line), at, ctime
	return c, nil
}

// FileRecord is fs as the file table keeps it. fs is a committed state,
// whose fields read here are never written again.
func FileRecord(fs *corpus.File) store.FileRecord {
	return store.FileRecord{
		Path: fs.Rel, Dev: fs.Dev, Ino: fs.Ino, Size: fs.Size, ModTime: fs.Mtime, IndexedTo: fs.ReadPos,
		Head: store.FingerprintOf(fs.Head.Bytes()), Tail: store.FingerprintOf(fs.Window.Bytes()),
		Carry: Carry{Binary: fs.Binary, InRecord: fs.InRecord, Pending: fs.ReadPos - fs.CommitPos,
			CommitLine: fs.CommitLine, ReadAt: fs.ReadAt, Ctime: fs.Ctime}.Encode(),
	}
}

// RecordState is the part of a committed file state that plan and recheck
// read, as the file table keeps it (FileRecord) and the reopen restores it
// (its check time the time of its read).
func RecordState(rec store.FileRecord, c Carry) *corpus.File {
	return &corpus.File{
		Dev: rec.Dev, Ino: rec.Ino, Size: rec.Size, Mtime: rec.ModTime, Ctime: c.Ctime,
		ReadPos: rec.IndexedTo, CommitPos: rec.IndexedTo - c.Pending,
		ReadAt: c.ReadAt, CheckedAt: c.ReadAt, Binary: c.Binary,
	}
}

// FingerprintAt reports whether the bytes of f at off have fingerprint want.
func FingerprintAt(f io.ReaderAt, off int64, want store.Fingerprint) bool {
	if want.Len == 0 {
		return true
	}
	buf := make([]byte, want.Len)
	n, err := f.ReadAt(buf, off)
	if n != len(buf) || err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	return store.FingerprintOf(buf) == want
}
