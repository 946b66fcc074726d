#!/usr/bin/env bash
# Issue 33's search latency as Neovim's own LSP client gets it: bench/serve's
# query set (`-mode queries`) asked through the plugin (editors/neovim) by a
# headless Neovim, set up as a user sets it up, on `runls serve` over stdio.
# Each query at top 5 and top 10, then a request to an unknown method (the
# protocol's own round trip), timed from just before client:request() to its
# handler (vim.uv.hrtime): Neovim's encoding, decoding and event loop are in
# every time, so the ratio is not bench/serve's Go client's. Two Neovims in
# turn: one with the set's context in setup() (episode, conversation), one
# without (the set's noContext params). bench/nvim/latency.lua measures,
# bench/nvim/report.lua prints as searchab does: each query's medians, the
# slowest of each way, the set's median over the round trip (target <= 2x)
# and the slowest at top 10 (<= 5 ms), FAIL lines for missed targets;
# bench/nvim/setrun.lua reads the set's run, bench/nvim/stop.lua stops the
# server when latency.lua failed.
#
#   bench/nvim.sh                        # runls built from this tree, the 1 GB run (big), 30 rounds
#   bench/nvim.sh RUNLS [SHAPE [ROUNDS]] # a binary, bench/serve's -shape (big, small), rounds
#   QUICK=1 bench/nvim.sh [RUNLS]        # testdata/sample-run, one round, two queries: the
#                                        # Neovim test suite's check that it still runs
#
# The run's working copy is made once by bench/serve (with the storm; some
# minutes the first time) and kept in COPY; the server's cache entry in
# SERVER_CACHE, so that a later run reopens it (the first indexes the run: a
# minute or more of CPU at 1 GB). It exits 1 when a request failed, every
# answer was empty (the answers must be real) or the server did not settle
# within SETTLE_TIMEOUT (times taken then are not to be trusted; an ERROR line),
# 2 when it could not measure (no client within 30 s, run/info not done within
# READY_TIMEOUT, a request unanswered within REQUEST_TIMEOUT, the server gone:
# the measurement ends there, and the server is stopped); a missed target is a
# FAIL line only.
#
# Environment: NVIM (a Neovim 0.11+; default: editors/neovim/scripts/fetch-nvim.sh's),
# CACHE (/tmp/runls-bench), COPY ($CACHE/nvim-SHAPE-run), SERVER_CACHE
# (COPY-cache-nvim), QUERIES (a set's JSON file instead of bench/serve's),
# READY_TIMEOUT (seconds for the first index, 900; 60 when QUICK), QUIET (seconds without
# a diagnostic before the rounds, 2; 0.3 when QUICK), SETTLE_TIMEOUT (seconds to wait for
# both, 300; 30 when QUICK), REQUEST_TIMEOUT (seconds for one answer, 60), QUICK.
set -euo pipefail

die() { echo "nvim.sh: $*" >&2; exit 2; }
load() { uptime 2>/dev/null || echo "load average: $(cut -d" " -f1-3 /proc/loadavg)"; }

cd "$(dirname "$0")/.."
repo=$(pwd)
RUNLS=${1:-}
SHAPE=${2:-big}
ROUNDS=${3:-30}
CACHE=${CACHE:-/tmp/runls-bench}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/runls-nvim-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [ -z "$RUNLS" ]; then
	command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
	RUNLS=$tmp/runls
	go build -o "$RUNLS" ./cmd/runls || die "could not build runls"
fi
[ -x "$RUNLS" ] || die "$RUNLS is not an executable"
RUNLS=$(cd "$(dirname "$RUNLS")" && pwd)/$(basename "$RUNLS")

NVIM=${NVIM:-}
if [ -z "$NVIM" ]; then
	NVIM=$(editors/neovim/scripts/fetch-nvim.sh | tail -1) || die "could not fetch Neovim"
fi

set_file=$tmp/set.json
targets=--targets
if [ -n "${QUICK:-}" ]; then
	# The sample run, a copy (the server writes nothing into it, but a test
	# may run beside others), two queries that find evidence with the
	# context and without it.
	ROUNDS=1
	targets=
	QUIET=${QUIET:-0.3} # the sample run's few diagnostics come at once
	# The sample run is indexed and settled within a second or two: a server
	# that hangs is not waited for as a 1 GB index would be.
	READY_TIMEOUT=${READY_TIMEOUT:-60}
	SETTLE_TIMEOUT=${SETTLE_TIMEOUT:-30}
	cp -R testdata/sample-run "$tmp/run" || die "no testdata/sample-run"
	SERVER_CACHE=$tmp/cache
	cat >"$set_file" <<EOF
{"run": "$tmp/run", "settings": {"runls": {"episode": "episode-2", "conversation": "conv-1"}},
 "queries": [
  {"label": "deploy database migration", "context": {"query": "deploy database migration"}, "noContext": {"query": "deploy database migration"}},
  {"label": "billing service", "context": {"query": "billing service"}, "noContext": {"query": "billing service"}}]}
EOF
elif [ -n "${QUERIES:-}" ]; then
	cp "$QUERIES" "$set_file" || die "cannot read $QUERIES"
else
	COPY=${COPY:-$CACHE/nvim-$SHAPE-run}
	mkdir -p "$(dirname "$COPY")"
	go run ./bench/serve -mode queries -shape "$SHAPE" -copy "$COPY" >"$set_file" || die "bench/serve -mode queries failed"
fi
if [ -z "${SERVER_CACHE:-}" ]; then
	# Decoded as JSON (Go's encoder escapes & < > and \ in a path).
	run=$("$NVIM" -u NONE -i NONE -n -l bench/nvim/setrun.lua "$set_file") || die "cannot read the set $set_file"
	[ -n "$run" ] || die "no run in the set"
	SERVER_CACHE=$run-cache-nvim
fi

# Nothing from the home folder is read or written (the server's log too).
mkdir -p "$tmp/xdg/config" "$tmp/xdg/data" "$tmp/xdg/state" "$tmp/xdg/cache"
echo "load at the start: $(load)"
"$NVIM" --headless -u NONE -i NONE -n --version | head -1
for way in 1 0; do
	out=$tmp/times-$way.tsv
	XDG_CONFIG_HOME=$tmp/xdg/config XDG_DATA_HOME=$tmp/xdg/data XDG_STATE_HOME=$tmp/xdg/state XDG_CACHE_HOME=$tmp/xdg/cache \
		RUNLS_CACHE_DIR=$SERVER_CACHE RUNLS_NVIM_PLUGIN=$repo/editors/neovim RUNLS_NVIM_BIN=$RUNLS \
		RUNLS_NVIM_SET=$set_file RUNLS_NVIM_CONTEXT=$way RUNLS_NVIM_ROUNDS=$ROUNDS RUNLS_NVIM_OUT=$out \
		RUNLS_NVIM_READY_TIMEOUT=${READY_TIMEOUT:-900} \
		RUNLS_NVIM_QUIET=${QUIET:-2} RUNLS_NVIM_SETTLE_TIMEOUT=${SETTLE_TIMEOUT:-300} \
		RUNLS_NVIM_REQUEST_TIMEOUT=${REQUEST_TIMEOUT:-60} \
		"$NVIM" --headless -u NONE -i NONE -n \
		-c "lua local ok, err = pcall(dofile, '$repo/bench/nvim/latency.lua'); if not ok then io.stderr:write('latency.lua: ' .. tostring(err) .. '\\n'); dofile('$repo/bench/nvim/stop.lua'); vim.cmd('cquit! 2') end; vim.cmd('qall!')" \
		</dev/null >"$tmp/nvim-$way.txt" 2>&1 || {
		cat "$tmp/nvim-$way.txt" >&2
		die "Neovim could not measure (context $way)"
	}
	[ -s "$out" ] || die "Neovim wrote no times (context $way)"
done
echo "load at the end: $(load)"
echo "rounds: $ROUNDS; the server's cache: $SERVER_CACHE"
# shellcheck disable=SC2086 # targets is one word or none
"$NVIM" -u NONE -i NONE -n -l bench/nvim/report.lua $targets "$tmp/times-1.tsv" "$tmp/times-0.tsv"
