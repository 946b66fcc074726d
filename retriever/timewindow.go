package retriever

import (
	"runls/recordformat"
	"runls/retriever/internal/records"
)

// The time bounds a request may carry (spec §5 from/to for run/search, §13
// for run/records): `yyyy-MM-dd HH:mm:ss`, inclusive, to the second, so
// that `09:00:05,300` is within `to: 09:00:05`.

// timeWindow is a request's from and to as inclusive bounds on time keys
// (recordformat.TimeKey); on is false when neither was given.
type timeWindow struct {
	on       bool
	from, to int64
}

// anyTime is the window of a request with neither bound.
var anyTime = timeWindow{from: recordformat.NoTime, to: records.NoLaterBound}

// parseTimeWindow reads from and to ("" for absent), rejecting a bound not of
// the form `yyyy-MM-dd HH:mm:ss`, and a from later than to (naming to).
func parseTimeWindow(from, to string) (timeWindow, error) {
	w := anyTime
	bound := func(field, v string) (int64, error) {
		if len(v) != timeBoundLen || recordformat.StampLen([]byte(v)) != timeBoundLen {
			return 0, &FieldError{field, v, "want a time as yyyy-MM-dd HH:mm:ss"}
		}
		return recordformat.TimeKey([]byte(v)), nil
	}
	if from != "" {
		k, err := bound("from", from)
		if err != nil {
			return w, err
		}
		w.from, w.on = k, true
	}
	if to != "" {
		k, err := bound("to", to)
		if err != nil {
			return w, err
		}
		// To the second: every time of that second, milliseconds or not.
		w.to, w.on = k+records.SecondKeys-1, true
	}
	if w.from > w.to {
		return w, &FieldError{"to", to, "before from " + from}
	}
	return w, nil
}

// holds reports whether time key k is within the window; a record without a
// time is within no window that is on.
func (w timeWindow) holds(k int64) bool {
	return !w.on || (k != recordformat.NoTime && k >= w.from && k <= w.to)
}
