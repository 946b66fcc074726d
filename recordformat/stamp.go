package recordformat

import (
	"strconv"
	"time"
)

// The timestamps of other log layouts (spec §2 "Other layouts"), read into
// the same sortable key as the run's own times (time.go), so that records of
// every layout order and filter together. A time is kept as written: its
// fields are read as digits and a zone offset is not applied (the run's own
// times have none either); only an epoch number (JSON lines) is turned into
// a date, in UTC. A field a layout does not write (syslog RFC 3164 has no
// year, logback's default pattern no date) is zero, so such times sort
// before every dated one.

// stampFields is a time read from a line.
type stampFields struct {
	year, month, day, hour, min, sec int
	ms                               int // -1: the time has no fraction
}

// key is the time's key (time.go).
func (s stampFields) key() int64 {
	digits := ((((int64(s.year)*100+int64(s.month))*100+int64(s.day))*100+int64(s.hour))*100+int64(s.min))*100 + int64(s.sec)
	k := digits * 1024
	if s.ms >= 0 {
		k += 1 + int64(s.ms)
	}
	return k
}

// KeyText gives a time key back as `yyyy-MM-dd HH:mm:ss`, with `.SSS` when
// the time has milliseconds: how the times of other layouts are shown.
func KeyText(key int64) string {
	if key < 0 {
		return ""
	}
	d := key / 1024
	b := make([]byte, 0, 23)
	pad := func(v int64, w int) {
		s := strconv.FormatInt(v, 10)
		for i := len(s); i < w; i++ {
			b = append(b, '0')
		}
		b = append(b, s...)
	}
	pad(d/1e10, 4)
	b = append(b, '-')
	pad(d/1e8%100, 2)
	b = append(b, '-')
	pad(d/1e6%100, 2)
	b = append(b, ' ')
	pad(d/1e4%100, 2)
	b = append(b, ':')
	pad(d/100%100, 2)
	b = append(b, ':')
	pad(d%100, 2)
	if r := key % 1024; r > 0 {
		b = append(b, '.')
		pad(r-1, 3)
	}
	return string(b)
}

// digitsAt reads n decimal digits at b[i:]; ok is false when any is not one.
func digitsAt(b []byte, i, n int) (int, bool) {
	if i < 0 || i+n > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[i : i+n] {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// clockAt reads `HH:mm:ss` at b[i:] and an optional fraction (`,` or `.`
// and 1 to 9 digits; milliseconds are its first three). It returns where
// the clock ends.
func clockAt(b []byte, i int, s *stampFields) (int, bool) {
	h, ok1 := digitsAt(b, i, 2)
	m, ok2 := digitsAt(b, i+3, 2)
	sec, ok3 := digitsAt(b, i+6, 2)
	if !ok1 || !ok2 || !ok3 || b[i+2] != ':' || b[i+5] != ':' {
		return 0, false
	}
	s.hour, s.min, s.sec, s.ms = h, m, sec, -1
	i += 8
	if i+1 < len(b) && (b[i] == ',' || b[i] == '.') && isDigit(b[i+1]) {
		j, ms, n := i+1, 0, 0
		for j < len(b) && isDigit(b[j]) && n < 9 {
			if n < 3 {
				ms = ms*10 + int(b[j]-'0')
			}
			j, n = j+1, n+1
		}
		for ; n < 3; n++ {
			ms *= 10
		}
		s.ms, i = ms, j
	}
	return i, true
}

// zoneAt skips a zone after a clock: `Z`, or `+hh:mm`, `+hhmm`, `+hh`.
func zoneAt(b []byte, i int) int {
	if i < len(b) && b[i] == 'Z' {
		return i + 1
	}
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		if _, ok := digitsAt(b, i+1, 2); !ok {
			return i
		}
		j := i + 3
		if j < len(b) && b[j] == ':' {
			if _, ok := digitsAt(b, j+1, 2); ok {
				return j + 3
			}
			return j
		}
		if _, ok := digitsAt(b, j, 2); ok {
			return j + 2
		}
		return j
	}
	return i
}

// Shapes of a date-and-time stamp at a line's start.
type stampShape uint8

const (
	shapeNone  stampShape = iota
	shapeSpace            // yyyy-MM-dd HH:mm:ss (log4j, logback, Python's asctime)
	shapeT                // yyyy-MM-ddTHH:mm:ss (ISO-8601)
	shapeSlash            // yyyy/MM/dd HH:mm:ss (Go's log package)
	shapeClock            // HH:mm:ss[.SSS] alone (logback's default pattern)
)

// dateTimeAt reads a date and time at b[i:]: `yyyy-MM-dd HH:mm:ss`,
// `yyyy-MM-ddTHH:mm:ss` or `yyyy/MM/dd HH:mm:ss`, a fraction and a zone.
func dateTimeAt(b []byte, i int) (stampFields, int, stampShape) {
	var s stampFields
	y, ok1 := digitsAt(b, i, 4)
	mo, ok2 := digitsAt(b, i+5, 2)
	d, ok3 := digitsAt(b, i+8, 2)
	if !ok1 || !ok2 || !ok3 || i+11 > len(b) {
		return s, 0, shapeNone
	}
	sep, mid := b[i+4], b[i+10]
	var shape stampShape
	switch {
	case sep == '-' && b[i+7] == '-' && mid == ' ':
		shape = shapeSpace
	case sep == '-' && b[i+7] == '-' && mid == 'T':
		shape = shapeT
	case sep == '/' && b[i+7] == '/' && mid == ' ':
		shape = shapeSlash
	default:
		return s, 0, shapeNone
	}
	end, ok := clockAt(b, i+11, &s)
	if !ok {
		return s, 0, shapeNone
	}
	s.year, s.month, s.day = y, mo, d
	return s, zoneAt(b, end), shape
}

// leadingStamp reads the stamp a line of a timestamped layout starts with,
// bare or in square brackets, and returns where it ends (after a closing
// bracket). A clock alone counts only with its fraction, so that a line
// that merely starts with a time of day is not read as a record.
func leadingStamp(b []byte) (stampFields, int, stampShape) {
	i := 0
	bracket := len(b) > 0 && b[0] == '['
	if bracket {
		i = 1
	}
	s, end, shape := dateTimeAt(b, i)
	if shape == shapeNone {
		var ok bool
		end, ok = clockAt(b, i, &s)
		if !ok || s.ms < 0 {
			return s, 0, shapeNone
		}
		shape = shapeClock
	}
	if bracket {
		if end >= len(b) || b[end] != ']' {
			return s, 0, shapeNone
		}
		end++
	}
	if end < len(b) && b[end] != ' ' && b[end] != '\t' && b[end] != ':' && b[end] != '|' {
		return s, 0, shapeNone
	}
	return s, end, shape
}

var monthNames = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// bsdStampAt reads syslog RFC 3164's `Mmm dd HH:mm:ss` (the day padded with
// a space or a zero) at b[i:].
func bsdStampAt(b []byte, i int) (stampFields, int, bool) {
	var s stampFields
	if i+15 > len(b) || b[i+3] != ' ' || b[i+6] != ' ' {
		return s, 0, false
	}
	for m, name := range monthNames {
		if string(b[i:i+3]) == name {
			s.month = m + 1
		}
	}
	if s.month == 0 {
		return s, 0, false
	}
	switch {
	case b[i+4] == ' ' && isDigit(b[i+5]):
		s.day = int(b[i+5] - '0')
	case isDigit(b[i+4]) && isDigit(b[i+5]):
		s.day = int(b[i+4]-'0')*10 + int(b[i+5]-'0')
	default:
		return s, 0, false
	}
	end, ok := clockAt(b, i+7, &s)
	return s, end, ok
}

// epochStamp reads an epoch number as JSON loggers write it (zap: seconds
// with a fraction; pino: milliseconds; also micro- and nanoseconds, told by
// size) as a UTC time.
func epochStamp(num []byte) (stampFields, bool) {
	var s stampFields
	intPart, frac := num, []byte(nil)
	for i, c := range num {
		if c == '.' {
			intPart, frac = num[:i], num[i+1:]
			break
		}
	}
	if len(intPart) == 0 || len(intPart) > 19 {
		return s, false
	}
	n, err := strconv.ParseInt(string(intPart), 10, 64)
	if err != nil || n < 0 {
		return s, false
	}
	var sec int64
	ms := -1
	switch {
	case n >= 1e17: // nanoseconds
		sec, ms = n/1e9, int(n/1e6%1000)
	case n >= 1e14: // microseconds
		sec, ms = n/1e6, int(n/1e3%1000)
	case n >= 1e11: // milliseconds
		sec, ms = n/1e3, int(n%1000)
	default:
		sec = n
		if len(frac) > 0 {
			ms = 0
			for i := 0; i < 3; i++ {
				ms *= 10
				if i < len(frac) {
					if !isDigit(frac[i]) {
						return s, false
					}
					ms += int(frac[i] - '0')
				}
			}
		}
	}
	t := time.Unix(sec, 0).UTC()
	s.year, s.month, s.day = t.Year(), int(t.Month()), t.Day()
	s.hour, s.min, s.sec, s.ms = t.Hour(), t.Minute(), t.Second(), ms
	return s, true
}
