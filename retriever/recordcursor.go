package retriever

import (
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"strconv"
	"strings"
)

// The cursor of run/records (spec §13): the place of the last record a page
// gave in the order of the list (time key, file, line), and a fingerprint
// of the filters it was made for, so that a cursor given with other filters
// is refused rather than read as a place in another list. It holds no
// index generation: a place in the order means the same after files grew
// or changed (recordlist.go says what the next page is then), and after
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

// recordPos is a record's place in the order of the list.
type recordPos struct {
	key  int64
	rel  string
	line uint32
}

// before reports whether p comes before o in the order of the list.
func (p recordPos) before(o recordPos) bool {
	if p.key != o.key {
		return p.key < o.key
	}
	if p.rel != o.rel {
		return p.rel < o.rel
	}
	return p.line < o.line
}

func (p recordPos) cursor(fp uint64) string { return p.encode(cursorVersion, fp) }

// previousCursor is the cursor of the page that ends just before p.
func (p recordPos) previousCursor(fp uint64) string { return p.encode(cursorBefore, fp) }

func (p recordPos) encode(kind byte, fp uint64) string {
	b := make([]byte, 0, 1+8+binary.MaxVarintLen64+binary.MaxVarintLen32+len(p.rel))
	b = append(b, kind)
	b = binary.BigEndian.AppendUint64(b, fp)
	b = binary.AppendVarint(b, p.key)
	b = binary.AppendUvarint(b, uint64(p.line))
	b = append(b, p.rel...)
	return hex.EncodeToString(b)
}

// parseCursor reads a cursor made for the filters of fingerprint fp, and
// whether it is a previous cursor.
func parseCursor(c string, fp uint64) (recordPos, bool, error) {
	bad := &FieldError{"cursor", clipValue(c), "not a cursor of run/records: give the cursor of the previous answer as it is"}
	b, err := hex.DecodeString(c)
	if err != nil || len(b) < 1+8 || (b[0] != cursorVersion && b[0] != cursorBefore) {
		return recordPos{}, false, bad
	}
	before := b[0] == cursorBefore
	if binary.BigEndian.Uint64(b[1:9]) != fp {
		return recordPos{}, false, &FieldError{"cursor", clipValue(c),
			"made for another list: a cursor continues the list of the same episode, conversation, agent, minLevel, from and to"}
	}
	b = b[9:]
	key, n := binary.Varint(b)
	if n <= 0 || key < -1 {
		return recordPos{}, false, bad
	}
	b = b[n:]
	line, n := binary.Uvarint(b)
	if n <= 0 || line > uint64(^uint32(0)) {
		return recordPos{}, false, bad
	}
	return recordPos{key: key, line: uint32(line), rel: string(b[n:])}, before, nil
}

// fingerprint hashes the filters a cursor belongs to (not limit: pages may
// differ in size).
func (q *recordsQuery) fingerprint() uint64 {
	h := fnv.New64a()
	var sb strings.Builder
	for _, f := range []string{q.epNum, strconv.FormatBool(q.hasConv), q.conv, q.agent, strconv.Itoa(int(q.minLevel)),
		strconv.FormatBool(q.window), strconv.FormatInt(q.from, 10), strconv.FormatInt(q.to, 10)} {
		sb.WriteString(strconv.Itoa(len(f)))
		sb.WriteByte(':')
		sb.WriteString(f)
	}
	h.Write([]byte(sb.String()))
	return h.Sum64()
}

// clipValue shortens a value quoted in an error.
func clipValue(s string) string {
	if len(s) <= 80 {
		return s
	}
	return CutText(s, 80) + "…"
}
