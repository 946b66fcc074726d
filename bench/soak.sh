#!/usr/bin/env bash
# The protocol soak of issue 8: starts the language server (in-process, over a
# pipe) on a generated run, appends to the run's files continuously, and sends a
# mix of run/search, workspace/symbol and $/cancelRequest (numeric ids) for a
# bounded time or number of requests. After each phase it stops the appends,
# waits for every answer and compares the server's answers with a freshly opened
# index. It fails on an error reply that should not be (only a cancelled request
# may answer -32800), on any difference, on goroutine growth beyond the bound
# (+40 during the load, +2 at the end, over the count after indexing), on heap
# growth beyond the bound (in process only: the heap in use after GC at the end
# at most 1.5 x the heap after the first phase + 8 MiB + 1 B per byte appended
# since; see soakHeapBound in lsp/soak_test.go), on a log entry at ERROR, and
# (goleak) on a goroutine left behind.
#
#   bench/soak.sh                          # 2 minutes or 20,000 requests, 8 MB run
#   DURATION=10m REQUESTS=200000 SIZE=64MB bench/soak.sh
#   RACE=1 bench/soak.sh                   # with the race detector (far fewer requests/s)
#   BINARY=1 bench/soak.sh                 # the built `runls serve` in a process of its
#                                          # own (RSS from /proc), appends from this one
#
# It prints one line per phase and the SOAK: summary lines (requests, cancels,
# goroutines, heap in use after GC) that go in the note.
set -euo pipefail
cd "$(dirname "$0")/.."
race=()
[ "${RACE:-0}" = 1 ] && race=(-race)
if [ "${BINARY:-0}" = 1 ]; then
	bin=$(mktemp -d)/runls
	go build "${race[@]}" -o "$bin" ./cmd/runls
	export RUNLS_SOAK_BINARY=$bin
fi
echo "soak: bounds: goroutines +40 during the load and +2 at the end over the count after indexing;"
echo "soak: heap in use after GC at the end <= 1.5 x heap after phase 1 + 8 MiB + 1 B per byte appended since (in process)"
set +e
RUNLS_SOAK=1 RUNLS_SOAK_DURATION=${DURATION:-2m} RUNLS_SOAK_REQUESTS=${REQUESTS:-20000} \
	RUNLS_SOAK_SIZE=${SIZE:-8MB} \
	go test "${race[@]}" -count=1 -timeout 0 -run '^TestSoak$' -v ./lsp 2>&1 |
	grep -v '^ *logger.go' | grep -E 'soak_test|^(---|PASS|FAIL|ok)|panic|DATA RACE'
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" = 0 ]; then
	echo "soak: PASS (every bound held)"
else
	echo "soak: FAIL (go test exit $rc)"
	exit 1
fi
