package retriever

// This file holds the file table the index writes into its cache entry
// (spec §15, issue 18): one record a file, as following knows it (§7,
// follow.go): identity, size, time, the offset read to, fingerprints of the
// file's first checkBytes and of the checkBytes before that offset as they
// were when read, and the parser's state at the commit position (carry).
// reopen.go classifies a run's files against it.

import (
	"encoding/binary"
	"fmt"

	"runls/internal/store"
	"runls/retriever/internal/corpus"
)

// carry is the parser's state at a file's commit position, and what the
// reopen needs besides the store's fields: the file table's Carry.
type carry struct {
	binary     bool
	inRecord   bool  // a record started before commitPos
	pending    int64 // readPos - commitPos: the tail read again when more comes
	commitLine uint32
	readAt     int64 // when the file's content was read (unix ns)
	ctime      int64 // the inode's change time then (unix ns)
}

const carryVersion = 2

func (c carry) encode() []byte {
	flags := byte(0)
	if c.binary {
		flags |= 1
	}
	if c.inRecord {
		flags |= 2
	}
	b := []byte{carryVersion, flags}
	b = binary.AppendUvarint(b, uint64(c.pending))
	b = binary.AppendUvarint(b, uint64(c.commitLine))
	b = binary.AppendVarint(b, c.readAt)
	return binary.AppendVarint(b, c.ctime)
}

func decodeCarry(b []byte) (carry, error) {
	bad := func(what string) (carry, error) {
		return carry{}, fmt.Errorf("%w: file table carry: %s", store.ErrCorrupt, what)
	}
	if len(b) < 2 || b[0] != carryVersion || b[1]&^3 != 0 {
		return bad("version or flags")
	}
	c := carry{binary: b[1]&1 != 0, inRecord: b[1]&2 != 0}
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
	c.pending, c.commitLine, c.readAt, c.ctime = int64(pending), uint32(line), at, ctime
	return c, nil
}

// fileRecord is fs as the file table keeps it. fs is a committed state,
// whose fields read here are never written again.
func fileRecord(fs *corpus.File) store.FileRecord {
	return store.FileRecord{
		Path: fs.Rel, Dev: fs.Dev, Ino: fs.Ino, Size: fs.Size, ModTime: fs.Mtime, IndexedTo: fs.ReadPos,
		Head: store.FingerprintOf(fs.Head), Tail: store.FingerprintOf(fs.Window),
		Carry: carry{binary: fs.Binary, inRecord: fs.InRecord, pending: fs.ReadPos - fs.CommitPos,
			commitLine: fs.CommitLine, readAt: fs.ReadAt, ctime: fs.Ctime}.encode(),
	}
}
