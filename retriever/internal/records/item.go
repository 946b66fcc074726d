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
	var level *string
	if lv := MetaLevel(meta); lv != recordformat.None {
		name := levelNames[lv]
		level = &name
	}
	key := t.Time(i)
	if key == recordformat.NoTime {
		return nil, level
	}
	s := FormatTimeKey(key, meta&MetaDotMillis != 0)
	return &s, level
}

// FormatTimeKey writes a time key (recordformat.TimeKey) back as the text it
// was read from: its fourteen digits, laid out as `yyyy-MM-dd HH:mm:ss`, and
// the milliseconds after a "." (dot) or a ",", when it has them.
func FormatTimeKey(key int64, dot bool) string {
	digits := strconv.FormatInt(key/1024, 10)
	for len(digits) < 14 {
		digits = "0" + digits
	}
	b := make([]byte, 0, StampWithMillis)
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
