package recordformat

import (
	"cmp"
	"strings"
	"testing"
	"time"
)

func TestTimeKey(t *testing.T) {
	tests := []struct {
		line string
		key  int64
		len  int
	}{
		{"2026-10-21 18:00:00 [running] x", 20261021180000 * 1024, 19},
		{"2026-10-21 18:00:00,000 INFO  [r] x", 20261021180000*1024 + 1, 23},
		{"2026-10-21 18:00:00.999 INFO  [r] x", 20261021180000*1024 + 1000, 23},
		{"2026-10-21 18:00:00,12 x", 20261021180000 * 1024, 19}, // two digits: no milliseconds
		{"0000-00-00 00:00:00", 0, 19},
		{"9999-99-99 99:99:99.999", 99999999999999*1024 + 1000, 23},
		{"2026-10-21 18:00", NoTime, 0},
		{"  2026-10-21 18:00:00", NoTime, 0},
		{"", NoTime, 0},
	}
	for _, tt := range tests {
		if got := TimeKey([]byte(tt.line)); got != tt.key {
			t.Errorf("TimeKey(%q) = %d, want %d", tt.line, got, tt.key)
		}
		if got := StampLen([]byte(tt.line)); got != tt.len {
			t.Errorf("StampLen(%q) = %d, want %d", tt.line, got, tt.len)
		}
	}
	a, _ := KeyTime(TimeKey([]byte("2026-10-21 18:00:58.750")))
	b, _ := KeyTime(TimeKey([]byte("2026-10-21 18:01:01,250")))
	if d := b.Sub(a); d != 2500*time.Millisecond {
		t.Errorf("18:00:58.750 to 18:01:01,250: %v, want 2.5s", d)
	}
	if _, ok := KeyTime(NoTime); ok {
		t.Error("KeyTime(NoTime) is a time")
	}
}

// FuzzTimeKey: keys order as the times compare as text once "," and "." are
// made equal (spec §13), a line without a time sorting first.
func FuzzTimeKey(f *testing.F) {
	f.Add([]byte("2026-10-21 18:00:00"), []byte("2026-10-21 18:00:00,000"))
	f.Add([]byte("2026-10-21 18:00:00.5x"), []byte("2026-09-31 23:59:59.999"))
	f.Add([]byte("x"), []byte("0000-00-00 00:00:00"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ka, kb := TimeKey(a), TimeKey(b)
		text := func(l []byte) string {
			return strings.ReplaceAll(string(l[:StampLen(l)]), ",", ".")
		}
		want := cmp.Compare(text(a), text(b))
		switch {
		case StampLen(a) == 0 && StampLen(b) == 0:
			want = 0
		case StampLen(a) == 0:
			want = -1
		case StampLen(b) == 0:
			want = 1
		}
		if got := cmp.Compare(ka, kb); got != want {
			t.Fatalf("keys %d, %d compare %d; the times %q, %q compare %d", ka, kb, got, text(a), text(b), want)
		}
		if _, ok := KeyTime(ka); ok != (StampLen(a) > 0) {
			t.Fatalf("KeyTime of %q: ok %v", a, ok)
		}
	})
}
