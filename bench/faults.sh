#!/usr/bin/env bash
# The big versions of the fault and confinement tests of issue 8, and the checks
# of the command line that go with them.
#
#   bench/faults.sh                   # everything below
#   STEPS="cli topk" bench/faults.sh  # some steps only
#
# Steps:
#   cli     builds runls; `runls search` of a query of 100,000 distinct terms exits 2
#           naming `query`; `runls search` and `runls check` of a run holding FIFOs
#           (one named like a record file) answer within $TIMEOUT (they would block
#           forever if they opened a FIFO for reading).
#   big     RUNLS_HARDEN_BIG=1: TestHarden* and TestConfine* of ./retriever with
#           100,000 small files and a 2 GB single file (peak heap logged: -v), without
#           the race detector (the default `go test -race ./retriever` runs the short
#           versions). Needs ~2.2 GB free in $TMPDIR.
#   race    the same tests, short versions, under -race, -count=$COUNT times.
#   topk    BenchmarkTopK1000 on the shared generated run (RUNLS_BENCH_SIZE, default
#           20MB; 1GB for the issue's figure).
#
# Environment: STEPS, TIMEOUT=30 (seconds), COUNT=3, RUNLS_BENCH_SIZE, FILE (size of
# the big single file, default 2GB).
set -euo pipefail

cd "$(dirname "$0")/.."
STEPS=${STEPS:-"cli race big topk"}
TIMEOUT=${TIMEOUT:-30}
COUNT=${COUNT:-3}
FILE=${FILE:-2GB}
work=$(mktemp -d)
cleanup() {
	rm -rf "$work"
}
trap cleanup EXIT
fail=0

step() { printf '\n== %s\n' "$*"; }
bad() {
	echo "FAIL: $*"
	fail=1
}

has() { [[ " $STEPS " == *" $1 "* ]]; }

if has cli; then
	step "cli: build"
	go build -o "$work/runls" ./cmd/runls

	step "cli: a query of 100,000 distinct terms"
	# 100,000 short arguments: one argument of ~1 MB is over the kernel's limit for one.
	mapfile -t terms < <(python3 -c '
d = "0123456789abcdefghijklmnopqrstuvwxyz"
def b36(n):
    s = ""
    while True:
        s = d[n % 36] + s
        n //= 36
        if n == 0:
            return s
for i in range(100000):
    print("t" + b36(i))')
	set +e
	"$work/runls" search testdata/sample-run "${terms[@]}" >"$work/out" 2>"$work/err"
	rc=$?
	set -e
	first=$(head -n1 "$work/err")
	echo "exit $rc: $first"
	[ "$rc" = 2 ] || bad "exit $rc, want 2"
	[[ "$first" == *query* ]] || bad "the error does not name query"
	[ ! -s "$work/out" ] || bad "printed to stdout"

	step "cli: FIFOs in the run"
	run="$work/fifo-run"
	mkdir -p "$run/episode-1/a"
	echo "apple note" >"$run/episode-1/a/notes.txt"
	printf '2026-10-21 18:00:00 [running] [c1] apple record\nunfielded apple\n' >"$run/episode-1/a/a.history"
	mkfifo "$run/episode-1/a/pipe.txt" "$run/episode-1/a/pipe.log"
	set +e
	timeout "$TIMEOUT" "$work/runls" search "$run" apple >"$work/out" 2>"$work/err"
	rc=$?
	set -e
	echo "search exit $rc: $(wc -l <"$work/out") lines"
	[ "$rc" = 0 ] || bad "search exit $rc (124: it blocked), want 0"
	grep -q 'apple note' "$work/out" || bad "search did not find the note"
	set +e
	timeout "$TIMEOUT" "$work/runls" check "$run" >"$work/out" 2>"$work/err"
	rc=$?
	set -e
	echo "check exit $rc: $(wc -l <"$work/out") lines"
	[ "$rc" = 1 ] || bad "check exit $rc (124: it blocked), want 1 (a warning)"
	grep -q 'a.history:2:' "$work/out" || bad "check did not warn of the unfielded line"
	grep -q pipe "$work/out" && bad "check named a FIFO"
fi

tests='^(TestHarden|TestConfine)'

if has race; then
	step "race: short versions under -race, $COUNT times"
	go test -race -count="$COUNT" -run "$tests" ./retriever || bad "race tests"
fi

if has big; then
	step "big: 100,000 files, a $FILE file"
	set +e
	RUNLS_HARDEN_BIG=1 RUNLS_HARDEN_FILE="$FILE" go test -count=1 -timeout 60m -v -run "$tests" ./retriever >"$work/big.log" 2>&1
	rc=$?
	set -e
	grep -E '^\s*(---|ok|FAIL|PASS)|harden_test|confine_test' "$work/big.log" | grep -v -- '--- PASS: .*/' || true
	[ "$rc" = 0 ] || bad "big tests (exit $rc)"
fi

if has topk; then
	step "topk: BenchmarkTopK1000 (RUNLS_BENCH_SIZE=${RUNLS_BENCH_SIZE:-20MB})"
	go test -run XXX -bench 'TopK1000' -benchtime 20x ./retriever || bad "benchmark"
fi

echo
if [ "$fail" = 0 ]; then
	echo "faults: all passed"
else
	echo "faults: FAILED"
fi
exit "$fail"
