package records

import (
	"strconv"

	"runls/recordformat"
)

// The time and level of the record that holds a result's piece (spec §9
// run/search items), from the file's record table: no file is read.

// Lengths of a record's time as written: `yyyy-MM-dd HH:mm:ss`, then
// `,SSS` or `.SSS`.
const (
	StampSeconds    = 19
	StampWithMillis = 23
)

// LevelName is a level as written ("" for None).
func LevelName(lv recordformat.Level) string { return levelNames[lv] }

var levelNames = [...]string{
	recordformat.None: "", recordformat.Trace: "TRACE", recordformat.Debug: "DEBUG",
	recordformat.Info: "INFO", recordformat.Warn: "WARN", recordformat.Error: "ERROR",
}

// TimeAndLevel returns the time, as written, and the level of the record
// that holds line n; nil for a plain file (no records), a line before the
// file's first record, and the level of a history record.
func (t *Table) TimeAndLevel(n uint32) (*string, *string) {
	i := t.RecordAt(n)
	if i < 0 {
		return nil, nil
	}
	meta := t.Meta(i)
	if MetaKind(meta) == KindBeforeFirst {
		return nil, nil
	}
	// Both strings in one allocation (a search's items make one each).
	var both *[2]string
	var level *string
	if lv := MetaLevel(meta); lv != recordformat.None {
		both = &[2]string{1: levelNames[lv]}
		level = &both[1]
	}
	key := t.Time(i)
	if key == recordformat.NoTime {
		return nil, level
	}
	if both == nil {
		both = new([2]string)
	}
	both[0] = FormatTimeKey(key, meta&MetaDotMillis != 0)
	return &both[0], level
}

// Touch reads, unchecked, what TimeAndLevel(n) reads first: the table's
// columns where its search of line n starts (spreadGuess), the record's
// line, time and meta there, and returns them folded into one value. A
// hint, never an answer (result items touch every hit's first, so that the
// processor fetches them side by side, issue 33).
func (t *Table) Touch(n uint32) uint32 {
	if len(t.line) == 0 {
		return 0
	}
	g := spreadGuess(t.line, n, t.lines)
	v := t.line[g]
	if g < len(t.meta) && g < len(t.sec) && g < len(t.ms) {
		v ^= uint32(t.meta[g]) ^ t.sec[g] ^ uint32(t.ms[g])
	}
	return v
}

// FormatTimeKey writes a time key (recordformat.TimeKey) back as the text it
// was read from: its fourteen digits, laid out as `yyyy-MM-dd HH:mm:ss`, and
// the milliseconds after a "." (dot) or a ",", when it has them. It is made
// on the stack and copied once, into the string.
func FormatTimeKey(key int64, dot bool) string {
	var num [20]byte
	n := strconv.AppendInt(num[:0], key/1024, 10)
	var padded [34]byte
	digits := padded[:0]
	for range 14 - min(len(n), 14) {
		digits = append(digits, '0')
	}
	digits = append(digits, n...)
	var out [StampWithMillis]byte
	b := out[:0]
	for i, layout := 0, "dddd-dd-dd dd:dd:dd"; i < len(layout); i++ {
		if layout[i] == 'd' {
			b = append(b, digits[0])
			digits = digits[1:]
		} else {
			b = append(b, layout[i])
		}
	}
	if ms := key % 1024; ms > 0 {
		sep := byte(',')
		if dot {
			sep = '.'
		}
		b = append(b, sep, byte('0'+(ms-1)/100), byte('0'+(ms-1)/10%10), byte('0'+(ms-1)%10))
	}
	return string(b)
}
