// This file holds the read advice a blob's mapping is given, on Linux: no
// readahead at its faults, and a read of the ranges a check is about to
// read whole.

package store

import "golang.org/x/sys/unix"

// adviseRandom turns off the readahead of faults on a mapping
// (MADV_RANDOM). A fault on a mapped file page not in the page cache
// otherwise reads the device's whole readahead window around it
// (read_ahead_kb: 8 MB on the machines issue 33 was measured on): a reopen
// whose answer touches a few pages of each of a 10 GB run's 250 segments
// read 4.7 GB of its 5.2 GB entry from the disk when the entry was not in
// the page cache (3.6 s against 0.35 s with it; 15-19 s under load). Every
// read of a restored blob's bytes is checked first (CheckRange, Check),
// and the check asks for its range whole (adviseWillNeed), so what is read
// is the checked chunks, in one request each. Only a hint: an error leaves
// the default.
func adviseRandom(data []byte) {
	if len(data) > 0 {
		_ = unix.Madvise(data, unix.MADV_RANDOM)
	}
}

// adviseSequential asks for aggressive readahead on data's range [lo, hi)
// while a pass reads it whole (MADV_SEQUENTIAL), and adviseRandom again
// after: a 137 MB dictionary checked at a 10 GB reopen's open through
// faults of a page each took some 38,000 faults.
func adviseSequential(data []byte, lo, hi int, pass func()) {
	lo &^= pageSize - 1
	hi = min(roundPage(hi), len(data))
	if hi <= lo {
		pass()
		return
	}
	_ = unix.Madvise(data[lo:hi], unix.MADV_SEQUENTIAL)
	defer unix.Madvise(data[lo:hi], unix.MADV_RANDOM)
	pass()
}

// adviseWillNeed starts reading the pages of data's range [lo, hi) that are
// not in the page cache (MADV_WILLNEED, asynchronously): the range a check
// reads whole, read in large requests rather than one fault a page.
func adviseWillNeed(data []byte, lo, hi int) {
	lo &^= pageSize - 1
	hi = min(roundPage(hi), len(data))
	if hi > lo {
		_ = unix.Madvise(data[lo:hi], unix.MADV_WILLNEED)
	}
}
