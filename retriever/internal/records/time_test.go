package records

import (
	"cmp"
	"testing"

	"runls/recordformat"
)

// FuzzPackTime: the table's 6-byte time gives back the key it was made
// from, and keys on the clock keep their order in (sec, ms).
func FuzzPackTime(f *testing.F) {
	f.Add("2026-10-21 18:00:00", "2026-10-21 18:00:00,000")
	f.Add("1970-01-01 00:00:00.999", "2100-12-31 23:59:60")
	f.Add("2101-01-01 00:00:00", "2026-13-45 99:99:99")
	f.Fuzz(func(t *testing.T, a, b string) {
		ka, kb := recordformat.TimeKey([]byte(a)), recordformat.TimeKey([]byte(b))
		sa, ma, oka := packTime(ka)
		sb, mb, okb := packTime(kb)
		if oka && unpackTime(sa, ma) != ka {
			t.Fatalf("%q: key %d packed (%d, %d) unpacks to %d", a, ka, sa, ma, unpackTime(sa, ma))
		}
		if oka && okb && ka != recordformat.NoTime && kb != recordformat.NoTime &&
			cmp.Compare(ka, kb) != cmp.Or(cmp.Compare(sa, sb), cmp.Compare(ma, mb)) {
			t.Fatalf("%q, %q: keys %d, %d; packed (%d, %d), (%d, %d)", a, b, ka, kb, sa, ma, sb, mb)
		}
		if !oka && (sa != secOver || ka == recordformat.NoTime) {
			t.Fatalf("%q off the clock packs to %d", a, sa)
		}
	})
}
