package lsp

import (
	"testing"
	"time"
)

func TestFormatSince(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                  "+0 s",
		2500 * time.Millisecond:            "+2.5 s",
		149 * time.Millisecond:             "+0.149 s",
		59999 * time.Millisecond:           "+59.999 s",
		time.Minute + 5*time.Second:        "+1 min 5 s",
		2*time.Hour + 3*time.Minute + 59e9: "+2 h 3 min",
		75 * time.Hour:                     "+3 d 3 h",
		-1200 * time.Millisecond:           "−1.2 s",
	} {
		if got := formatSince(d); got != want {
			t.Errorf("formatSince(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestCodeSpan(t *testing.T) {
	for in, want := range map[string]string{
		"conv-1":   "`conv-1`",
		"a`b":      "``a`b``",
		"`x":       "`` `x ``",
		"":         "(empty)",
		"**bold**": "`**bold**`",
	} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
	if got := escapeMarkdown("a_b*c"); got != `a\_b\*c` {
		t.Errorf("escapeMarkdown = %q", got)
	}
}
