package recordformat

import "time"

// A record's time as a sortable integer (spec §13: records are ordered by
// their time as written, compared as text once "," and "." are made equal,
// records without a time first). The key is the fourteen digits of
// `yyyy-MM-dd HH:mm:ss` read as one decimal number, times 1024, plus 1 and
// the milliseconds when the time has them (so `18:00:00` sorts before
// `18:00:00,000`, as the shorter text does). Read as digits, not as a date,
// a key orders as the text does even for a date no calendar has (the parser
// takes any digits): 99999999999999·1024 + 1000 is below 2⁵⁷.

// NoTime is the key of a line that has no time (a line before a file's first
// record); it sorts before every time.
const NoTime int64 = -1

// StampLen returns how many bytes of a record line its time takes (19, or 23
// with milliseconds), or 0 when the line does not start with one.
func StampLen(line []byte) int {
	const stamp = "dddd-dd-dd dd:dd:dd"
	if len(line) < len(stamp) {
		return 0
	}
	for i := 0; i < len(stamp); i++ {
		if stamp[i] == 'd' {
			if !isDigit(line[i]) {
				return 0
			}
		} else if line[i] != stamp[i] {
			return 0
		}
	}
	n := len(stamp)
	if len(line) >= n+4 && (line[n] == ',' || line[n] == '.') && isDigit(line[n+1]) && isDigit(line[n+2]) && isDigit(line[n+3]) {
		return n + 4
	}
	return n
}

// TimeKey returns the key of the time a record line starts with, or NoTime.
func TimeKey(line []byte) int64 {
	n := StampLen(line)
	if n == 0 {
		return NoTime
	}
	var digits int64
	for i := 0; i < 19; i++ {
		if c := line[i]; isDigit(c) {
			digits = digits*10 + int64(c-'0')
		}
	}
	key := digits * 1024
	if n == 23 {
		key += 1 + int64(line[20]-'0')*100 + int64(line[21]-'0')*10 + int64(line[22]-'0')
	}
	return key
}

// KeyTime returns the time a key stands for, for telling how far apart two
// records are; a field out of its range (month 13) carries over as
// time.Date does. ok is false for NoTime.
func KeyTime(key int64) (t time.Time, ok bool) {
	if key < 0 {
		return time.Time{}, false
	}
	ms := 0
	if r := key % 1024; r > 0 {
		ms = int(r - 1)
	}
	d := key / 1024
	field := func(width int64) int {
		v := d % width
		d /= width
		return int(v)
	}
	sec, min, hour, day, month := field(100), field(100), field(100), field(100), field(100)
	year := int(d)
	return time.Date(year, time.Month(month), day, hour, min, sec, ms*int(time.Millisecond), time.UTC), true
}
