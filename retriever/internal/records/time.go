package records

import (
	"slices"

	"runls/recordformat"
)

// The record table keeps a record's time (recordformat.TimeKey, 8 bytes) in
// 6: seconds on a clock whose fields run as written (months of 31 days,
// minutes of 61 seconds, from 1970 to 2100, 32,676,480 "seconds" a year),
// which orders as the text does, and the milliseconds. A time outside that
// clock (month 13, year 2200) is kept whole in a short list beside it.

const (
	secNone      = ^uint32(0)     // no time: a line before the first record
	secOver      = ^uint32(0) - 1 // the time is in the table's overflow list
	clockYear0   = 1970
	clockPerYear = 12 * 31 * 24 * 60 * 61
	clockYears   = int64(secOver) / clockPerYear // 131: 1970 to 2100
)

// packTime splits a time key into clock seconds and milliseconds (0: the
// time has none, else 1 + them); ok is false for a time off the clock.
func packTime(key int64) (sec uint32, ms uint16, ok bool) {
	if key == recordformat.NoTime {
		return secNone, 0, true
	}
	d := key / 1024
	s, m, h := d%100, d/100%100, d/1e4%100
	day, month, year := d/1e6%100, d/1e8%100, d/1e10
	if year < clockYear0 || year >= clockYear0+clockYears || month < 1 || month > 12 || day < 1 || day > 31 || h > 23 || m > 59 || s > 60 {
		return secOver, 0, false
	}
	c := (((((year-clockYear0)*12+month-1)*31+day-1)*24+h)*60+m)*61 + s
	return uint32(c), uint16(key % 1024), true
}

// unpackTime is the time key of clock seconds and milliseconds.
func unpackTime(sec uint32, ms uint16) int64 {
	if sec == secNone {
		return recordformat.NoTime
	}
	c := int64(sec)
	s, c := c%61, c/61
	m, c := c%60, c/60
	h, c := c%24, c/24
	day, c := c%31+1, c/31
	month, year := c%12+1, c/12+clockYear0
	return ((((year*100+month)*100+day)*100+h)*100+m)*100*1024 + s*1024 + int64(ms)
}

// TimeOver is the whole time of a record off the clock.
type TimeOver struct {
	rec uint32
	key int64
}

// overKey finds record i's time in the overflow list.
func overKey(over []TimeOver, i int) int64 {
	k, _ := slices.BinarySearchFunc(over, uint32(i), func(o TimeOver, rec uint32) int { return int(o.rec) - int(rec) })
	return over[k].key
}
