package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"123", 123, false},
		{"100KB", 100 << 10, false},
		{"100MB", 100 << 20, false},
		{"100mib", 100 << 20, false},
		{"1GB", 1 << 30, false},
		{"1.5GB", 3 << 29, false},
		{" 2M ", 2 << 20, false},
		{"", 0, true},
		{"0", 0, true},
		{"-5MB", 0, true},
		{"MB", 0, true},
		{"10TB", 0, true},
		{"NaN", 0, true},
		{"inf", 0, true},
		{"1e300GB", 0, true},
		{"0.5", 0, true},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && !strings.Contains(err.Error(), "-size") {
			t.Errorf("parseSize(%q): error %q does not name -size", tt.in, err)
		}
	}
}

func TestRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if err := run([]string{"-size", "64KB", "-seed", "3", "-out", out}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "episode-2", "alice", "alice.history")); err != nil {
		t.Errorf("no history file: %v", err)
	}
	if err := run([]string{"-size", "64KB", "-out", out}); err == nil {
		t.Errorf("second run into the same folder: no error")
	}
	if err := run([]string{"-size", "64KB"}); err == nil || !strings.Contains(err.Error(), "-out") {
		t.Errorf("missing -out: err %v", err)
	}
	file := filepath.Join(out, "episode-2", "alice", "alice.log")
	before, _ := os.Stat(file)
	if err := run([]string{"-append", file, "-records", "10"}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(file)
	if after.Size() <= before.Size() {
		t.Errorf("-append did not grow the file")
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1", "100MB", "1.5GiB", "", "-1", "1e300GB", "NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err == nil && n <= 0 {
			t.Errorf("parseSize(%q) = %d with no error", s, n)
		}
	})
}
