package main

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"testing"

	"runls/internal/rungen"
)

// TestCheckSummaryOfGeneratedRun: on a generated run, `runls check
// --summary` counts one unindented-continuation per record the generator
// wrote a stack trace after, no more (spec §9: one per record, not one per
// line). The run is small here; RUNLS_BENCH_SIZE=100MB checks the shared
// generated run of that size (rungen.BenchRun) against rungen.Measure.
func TestCheckSummaryOfGeneratedRun(t *testing.T) {
	var dir string
	var st rungen.Stats
	if os.Getenv("RUNLS_BENCH_SIZE") != "" {
		var opts rungen.Options
		var err error
		if dir, opts, err = rungen.BenchRun(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st, err = rungen.Measure(opts); err != nil {
			t.Fatal(err)
		}
	} else {
		dir = t.TempDir()
		var err error
		if st, err = rungen.Generate(context.Background(), dir, rungen.Options{Bytes: 3 << 20, Seed: 5}); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runCLI(t, dir, "check", "--summary", ".")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, errs)
	}
	total := regexp.MustCompile(`(?m)^(\d+) files: (\d+) unindented-continuation, (\d+) unfielded-line$`).FindStringSubmatch(out)
	if total == nil {
		t.Fatalf("no total line in:\n%s", out)
	}
	unindented, _ := strconv.ParseInt(total[2], 10, 64)
	t.Logf("%d bytes, %d records, %d of them with a stack trace; runls check --summary: %s", st.Bytes, st.Records, st.StackTraces, total[0])
	if unindented != st.StackTraces {
		t.Errorf("%d unindented-continuation warnings, want %d: one per record with a stack trace", unindented, st.StackTraces)
	}
}
