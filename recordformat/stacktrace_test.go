package recordformat

import (
	"testing"
)

func TestStackTraceLines(t *testing.T) {
	tests := []struct {
		line      string
		stack     bool
		exception string // the name ThrownName gives, "" for none
	}{
		{"\tat com.example.Migrator.apply(Migrator.java:88)", true, ""},
		{"at com.example.Migrator.apply(Migrator.java:88)", true, ""},
		{"java.lang.IllegalStateException: column \"currency\" already exists", true, "java.lang.IllegalStateException"},
		{"java.lang.Error", true, "java.lang.Error"},
		{"java.lang.Throwable: x", true, "java.lang.Throwable"},
		{"org.postgresql.util.PSQLException: ERROR: relation exists", true, "org.postgresql.util.PSQLException"},
		{"Caused by: java.io.IOException: broken pipe", true, "java.io.IOException"},
		{"Suppressed: java.io.UncheckedIOException", true, "java.io.UncheckedIOException"},
		{"Exception in thread \"main worker\" java.lang.OutOfMemoryError: Java heap space", true, "java.lang.OutOfMemoryError"},
		{"\t... 12 more", true, ""},
		{"... 12 more", true, ""},
		{"... more", false, ""},
		{"IllegalStateException: not qualified", false, ""},
		{"a.b.FooError:glued", false, ""},
		{"com.example.NotAnExceptionAtAll: x", false, ""},
		{"2026-10-21 18:00:00 INFO  [running] [conv-1] Bob java.lang.Error", false, ""},
		{"the deploy failed with java.io.IOException: x", false, ""},
		{"", false, ""},
		{"1.2Exception", false, ""},
		{"  java.lang.IllegalStateException: indented", false, "java.lang.IllegalStateException"},
	}
	for _, tt := range tests {
		if got := IsStackTraceLine([]byte(tt.line)); got != tt.stack {
			t.Errorf("IsStackTraceLine(%q) = %v, want %v", tt.line, got, tt.stack)
		}
		name, ok := ThrownName([]byte(tt.line))
		if ok != (tt.exception != "") || string(name) != tt.exception {
			t.Errorf("ThrownName(%q) = %q, %v; want %q", tt.line, name, ok, tt.exception)
		}
	}
}

func FuzzStackTraceLine(f *testing.F) {
	for _, s := range []string{"\tat a.B.c(B.java:1)", "java.lang.Error: x", "Caused by: a.BException", "... 3 more", "Exception in thread \"m\" a.bError"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		name, ok := ThrownName([]byte(line))
		if ok && len(name) == 0 {
			t.Fatalf("ThrownName(%q): an empty name", line)
		}
		if n, ok := ExceptionName([]byte(line)); ok && !IsStackTraceLine([]byte(line)) && len(line) > 0 && line[0] != ' ' {
			t.Fatalf("%q names %q but is no stack-trace line", line, n)
		}
	})
}
