package recordformat

// The level words of other layouts, read into the run's five levels: the
// run's own levels keep their meaning; WARNING (Python) is WARN; FATAL,
// CRITICAL, SEVERE, PANIC and the like are ERROR, so that `--min-level
// ERROR` lists them; NOTICE is INFO; VERBOSE and FINE are TRACE.

var levelNames = [...]string{None: "", Trace: "TRACE", Debug: "DEBUG", Info: "INFO", Warn: "WARN", Error: "ERROR"}

// String is the level's name as the run writes it, "" for None.
func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return ""
}

// levelWord reads a level word, in upper, lower or title case.
func levelWord(w []byte) (Level, bool) {
	if len(w) < 3 || len(w) > 8 {
		return None, false
	}
	var up [8]byte
	lowers := 0
	for i, c := range w {
		switch {
		case c >= 'a' && c <= 'z':
			lowers++
			c -= 'a' - 'A'
		case c < 'A' || c > 'Z':
			return None, false
		}
		up[i] = c
	}
	title := lowers == len(w)-1 && w[0] >= 'A' && w[0] <= 'Z'
	if lowers != 0 && lowers != len(w) && !title {
		return None, false // "iNFO" is no level
	}
	switch string(up[:len(w)]) {
	case "TRACE", "VERBOSE", "FINEST", "FINER", "FINE":
		return Trace, true
	case "DEBUG", "DBG":
		return Debug, true
	case "INFO", "INF", "NOTICE":
		return Info, true
	case "WARN", "WARNING", "WRN":
		return Warn, true
	case "ERROR", "ERR", "FATAL", "CRITICAL", "CRIT", "SEVERE", "PANIC", "DPANIC", "ALERT", "EMERG":
		return Error, true
	}
	return None, false
}

// syslogLevel is the level of a syslog priority's severity (pri mod 8).
func syslogLevel(pri int) Level {
	switch sev := pri % 8; {
	case sev <= 3:
		return Error
	case sev == 4:
		return Warn
	case sev <= 6:
		return Info
	}
	return Debug
}

// numericLevel is the level of pino's and bunyan's numbers (10 trace, 20
// debug, 30 info, 40 warn, 50 error, 60 fatal).
func numericLevel(n int) Level {
	switch {
	case n <= 0:
		return None
	case n < 20:
		return Trace
	case n < 30:
		return Debug
	case n < 40:
		return Info
	case n < 50:
		return Warn
	}
	return Error
}

// logcatLevel is the level of Android logcat's letters.
func logcatLevel(c byte) (Level, bool) {
	switch c {
	case 'V':
		return Trace, true
	case 'D':
		return Debug, true
	case 'I':
		return Info, true
	case 'W':
		return Warn, true
	case 'E', 'F', 'A':
		return Error, true
	}
	return None, false
}
