package records

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/fnv"
	"strconv"
	"strings"
)

// The cursor of run/records (spec §13): the place of the last record a page
// gave in the order of the list (time key, file, line), and a fingerprint
// of the filters it was made for, so that a cursor given with other filters
// is refused rather than read as a place in another list. It holds no
// index generation: a place in the order means the same after files grew
// or changed (page.go says what the next page is then), and after
// the server restarted.
//
// It is written as lowercase hex: opaque, the same in every process, and
// made of characters no masking rule takes for a secret or a path (an MCP
// answer is masked once more on its way out, cursor included).
//
//	byte 0     cursorVersion
//	bytes 1-8  the filters' fingerprint (FNV-1a 64, big-endian)
//	varint     time key (NoTime is -1)
//	uvarint    line (0-based)
//	the rest   the file's path relative to the run folder

// A cursor continues after its place (cursorVersion); a previous cursor
// (cursorBefore) gives the page that ends just before it.
const (
	cursorVersion = 1
	cursorBefore  = 2
)

// Pos is a record's place in the order of the list: its time key, its
// file's path relative to the run folder, its first line.
type Pos struct {
	Key  int64
	Rel  string
	Line uint32
}

// Before reports whether p comes before o in the order of the list.
func (p Pos) Before(o Pos) bool {
	if p.Key != o.Key {
		return p.Key < o.Key
	}
	if p.Rel != o.Rel {
		return p.Rel < o.Rel
	}
	return p.Line < o.Line
}

// Cursor is the cursor of place p for the filters of fingerprint fp.
func (p Pos) Cursor(fp uint64) string { return p.encode(cursorVersion, fp) }

// PreviousCursor is the cursor of the page that ends just before p.
func (p Pos) PreviousCursor(fp uint64) string { return p.encode(cursorBefore, fp) }

func (p Pos) encode(kind byte, fp uint64) string {
	b := make([]byte, 0, 1+8+binary.MaxVarintLen64+binary.MaxVarintLen32+len(p.Rel))
	b = append(b, kind)
	b = binary.BigEndian.AppendUint64(b, fp)
	b = binary.AppendVarint(b, p.Key)
	b = binary.AppendUvarint(b, uint64(p.Line))
	b = append(b, p.Rel...)
	return hex.EncodeToString(b)
}

// Why a cursor is refused: it is not one, or it was made for other filters.
var (
	ErrNotCursor = errors.New("not a cursor of run/records")
	ErrOtherList = errors.New("a cursor of another list")
)

// ParseCursor reads a cursor made for the filters of fingerprint fp, and
// whether it is a previous cursor.
func ParseCursor(c string, fp uint64) (Pos, bool, error) {
	b, err := hex.DecodeString(c)
	if err != nil || len(b) < 1+8 || (b[0] != cursorVersion && b[0] != cursorBefore) {
		return Pos{}, false, ErrNotCursor
	}
	before := b[0] == cursorBefore
	if binary.BigEndian.Uint64(b[1:9]) != fp {
		return Pos{}, false, ErrOtherList
	}
	b = b[9:]
	key, n := binary.Varint(b)
	if n <= 0 || key < -1 {
		return Pos{}, false, ErrNotCursor
	}
	b = b[n:]
	line, n := binary.Uvarint(b)
	if n <= 0 || line > uint64(^uint32(0)) {
		return Pos{}, false, ErrNotCursor
	}
	return Pos{Key: key, Line: uint32(line), Rel: string(b[n:])}, before, nil
}

// Fingerprint hashes the filters a cursor belongs to (not Limit: pages may
// differ in size).
func (q *Query) Fingerprint() uint64 {
	h := fnv.New64a()
	var sb strings.Builder
	for _, f := range []string{q.EpNum, strconv.FormatBool(q.HasConv), q.Conv, q.Agent, strconv.Itoa(int(q.MinLevel)),
		strconv.FormatBool(q.Window), strconv.FormatInt(q.From, 10), strconv.FormatInt(q.To, 10)} {
		sb.WriteString(strconv.Itoa(len(f)))
		sb.WriteByte(':')
		sb.WriteString(f)
	}
	h.Write([]byte(sb.String()))
	return h.Sum64()
}
