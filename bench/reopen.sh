#!/usr/bin/env bash
# Measures what the persisted index gives a user (issue 18): the real
# `runls serve` over stdio opens the run with the cache off, with an empty
# cache folder, and again (the reopen); each timed from the process's start to
# the first answered run/search, with its anonymous memory (RssAnon) sampled
# during the indexing and after, and the cache entry's size; every figure as a
# ratio of the run's size, on a 1 GB / 800-file run and a 200 MB /
# 100,000-file run (bench/serve -mode reopen, see bench/serve/reopen.go).
#
#   bench/reopen.sh                        # both runs
#   SHAPES=small bench/reopen.sh           # one of them
#   RUNLS=/path/to/runls bench/reopen.sh   # another binary (the "before" figures)
#
# It exits 1 when a target of issue 18 fails on either run.
#
# Environment: SHAPES (big small), RUNLS (built from this tree), CACHE
# (/tmp/runls-bench: generated runs), ARGS (flags for bench/serve).
set -euo pipefail

SHAPES=${SHAPES:-big small}
CACHE=${CACHE:-/tmp/runls-bench}

die() { echo "reopen.sh: $*" >&2; exit 2; }

cd "$(dirname "$0")/.."
mkdir -p "$CACHE/bin"
if [ -z "${RUNLS:-}" ]; then
	RUNLS=$CACHE/bin/runls-reopen-bench
	go build -o "$RUNLS" ./cmd/runls || die "could not build runls"
fi
go build -o "$CACHE/bin/reopen-bench" ./bench/serve || die "could not build bench/serve"

status=0
for shape in $SHAPES; do
	echo "== $shape"
	# shellcheck disable=SC2086
	"$CACHE/bin/reopen-bench" -mode reopen -runls "$RUNLS" -shape "$shape" -cache "$CACHE" ${ARGS:-} || status=$?
	[ "$status" -le 1 ] || die "bench/serve -mode reopen failed on the $shape run"
done
exit "$status"
