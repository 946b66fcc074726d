#!/usr/bin/env bash
# Times what an editor gets: the real `runls serve` over stdio, run/search
# against a request to an unknown method and one `rg -i -n` scan, on a 1 GB /
# 800-file run and a 200 MB / 100,000-file run, then 200 appends of a new word
# to different files, each searched at once, and a file replaced, truncated,
# deleted, a new episode and a new agent folder (see bench/serve/main.go).
#
#   bench/serve.sh                        # both runs (some 5 minutes, more the first time)
#   SHAPES=small bench/serve.sh           # one of them
#   RUNLS=/path/to/runls bench/serve.sh   # another binary (the "before" figures)
#   ARGS="-rounds 5" bench/serve.sh       # flags for bench/serve
#
# It exits 1 when a target of issue 13 fails on either run. With MODE=reopen
# (bench/reopen.sh) it measures the opens with and without the persisted
# index instead (issue 18); with MODE=failures, run/failures against
# run/search (issue 27: SHAPES=big MODE=failures ARGS="-rounds 2" bench/serve.sh).
#
# Environment: SHAPES (big small), RUNLS (built from this tree), CACHE
# (/tmp/runls-bench), ARGS, MODE (search reopen failures).
set -euo pipefail

SHAPES=${SHAPES:-big small}
CACHE=${CACHE:-/tmp/runls-bench}
MODE=${MODE:-search}

die() { echo "serve.sh: $*" >&2; exit 2; }

cd "$(dirname "$0")/.."
[ "$MODE" != search ] || command -v rg >/dev/null || die "rg (ripgrep) is missing: apt-get install ripgrep"
mkdir -p "$CACHE/bin"
# This invocation's binaries in a folder of its own: two benchmarks run at
# once (A B against another tree) must not build over each other's binary.
BIN=$(mktemp -d "$CACHE/bin/build.XXXXXX")
trap 'rm -rf "$BIN"' EXIT
if [ -z "${RUNLS:-}" ]; then
	RUNLS=$BIN/runls-serve-bench
	go build -o "$RUNLS" ./cmd/runls || die "could not build runls"
fi
go build -o "$BIN/serve-bench" ./bench/serve || die "could not build bench/serve"

status=0
for shape in $SHAPES; do
	echo "== $shape"
	# shellcheck disable=SC2086
	"$BIN/serve-bench" -mode "$MODE" -runls "$RUNLS" -shape "$shape" -cache "$CACHE" ${ARGS:-} || status=$?
	[ "$status" -le 1 ] || die "bench/serve failed on the $shape run"
done
exit "$status"
