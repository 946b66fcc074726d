#!/usr/bin/env bash
# The fleet's benchmark (issue 32, spec §16): RUNS generated runs of SIZE each
# shipped into a 3-process VictoriaLogs cluster (2 storage nodes, 1 front, on
# loopback), then the benchmark's queries searched there.
#
#   bench/fleet.sh                       # 1,000 runs of 1 MB
#   RUNS=100 ROUNDS=5 bench/fleet.sh
#
# It prints:
#   - ship: the runs' bytes over the wall time of one `runls ship RUN... --to URL`
#     (target: at least 20 MB/s), and the CPU seconds runls and the three
#     VictoriaLogs processes spent on it: what bounds it on two cores;
#   - fleet search: median and p99 of `runls search --fleet URL QUERY` (a process
#     each, as a user runs it) over the queries, ROUNDS rounds (target: median at
#     most 100 ms);
#   - beside it, interleaved query by query: rg over the same RUNS folders (every
#     word of the query, `-e w1 -e w2 ...`, one scan) and `runls search` on one run
#     (its index cached: a reopen and a query);
#   - --follow: 200 appends to a run being followed, each searchable within 2 s
#     (go test ./fleet -run TestFollow, with the target set);
#   - the load (uptime) before and after: figures taken on a shared machine are noisy.
#
# Environment:
#   RUNS=1000 SIZE=1MB SEED=1 QUERIES=13 ROUNDS=3 TOPK=10
#   EPISODES=4 AGENTS=2      shape of each run
#   CACHE=/tmp/runls-fleet-bench   runs, binaries, the cluster's data
#   EPISODE=episode-2 CONVERSATION=conv-1   request fields, so records are evidence
#   KEEP=1                   leave the cluster running (stop: fleet/scripts/victorialogs.sh stop CACHE/cluster)
set -euo pipefail

RUNS=${RUNS:-1000}
SIZE=${SIZE:-1MB}
SEED=${SEED:-1}
QUERIES=${QUERIES:-13}
ROUNDS=${ROUNDS:-3}
TOPK=${TOPK:-10}
EPISODES=${EPISODES:-4}
AGENTS=${AGENTS:-2}
CACHE=${CACHE:-/tmp/runls-fleet-bench}
EPISODE=${EPISODE:-episode-2}
CONVERSATION=${CONVERSATION:-conv-1}

die() { echo "fleet.sh: $*" >&2; exit 2; }

cd "$(dirname "$0")/.."
mkdir -p "$CACHE/bin"
# This invocation's binaries in a folder of its own: two benchmarks run at
# once (A B against another tree) must not build over each other's binary.
BIN=$(mktemp -d "$CACHE/bin/build.XXXXXX")
trap 'rm -rf "$BIN"' EXIT
command -v rg >/dev/null || die "rg (ripgrep) is missing: apt-get install ripgrep"

go build -o "$BIN/rungen" ./internal/rungen/cmd/rungen || die "could not build rungen"
go build -o "$BIN/runls" ./cmd/runls || die "could not build runls"
runls=$BIN/runls

# The runs, cached by what made them.
gen_hash=$( (cat internal/rungen/*.go; echo "$RUNS $SIZE $SEED $EPISODES $AGENTS") | sha256sum | cut -c1-12)
runs=$CACHE/runs-$gen_hash
if [ ! -f "$runs.done" ]; then
	rm -rf "$runs"
	mkdir -p "$runs"
	echo "generating $RUNS runs of $SIZE into $runs ..." >&2
	for i in $(seq 1 "$RUNS"); do
		"$BIN/rungen" -size "$SIZE" -seed $((SEED + i)) -episodes "$EPISODES" -agents "$AGENTS" \
			-workers 1 -out "$runs/run-$i" >/dev/null 2>&1 || die "rungen failed for run $i"
	done
	touch "$runs.done"
fi
total_bytes=$(find "$runs" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')

cluster=$CACHE/cluster
bash fleet/scripts/victorialogs.sh stop "$cluster" 2>/dev/null || true
rm -rf "$cluster"
front=$(bash fleet/scripts/victorialogs.sh start "$cluster") || die "the cluster did not start"
[ -n "${KEEP:-}" ] || trap 'bash fleet/scripts/victorialogs.sh stop "$cluster"; rm -rf "$BIN"' EXIT

load_before=$(uptime)
echo "runs: $RUNS x $SIZE ($total_bytes bytes) in $runs; cluster front $front" >&2
echo "load before: $load_before"

# cpu_seconds PID...: user+system CPU seconds the processes have used.
cpu_seconds() {
	local t=0 p f
	for p in "$@"; do
		read -r -a f <"/proc/$p/stat"
		t=$((t + f[13] + f[14]))
	done
	awk -v t="$t" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }'
}
# shellcheck disable=SC1091 # written by victorialogs.sh start
vl_pids=$(. "$cluster/cluster.env" && echo "$FRONT_PID $STORAGE1_PID $STORAGE2_PID")

sync
# shellcheck disable=SC2086 # the PIDs are separate arguments
vl0=$(cpu_seconds $vl_pids)
t0=$EPOCHREALTIME
/usr/bin/time -f "%U %S" -o "$CACHE/ship.time" "$runls" ship --to "$front" --no-cache --quiet "$runs"/run-* >"$CACHE/ship.out" 2>"$CACHE/ship.err" ||
	die "runls ship failed: $(tail -3 "$CACHE/ship.err")"
t1=$EPOCHREALTIME
# shellcheck disable=SC2086
vl1=$(cpu_seconds $vl_pids)
ship_line=$(cat "$CACHE/ship.out")
ship_mbs=$(awk -v b="$total_bytes" -v a="$t0" -v c="$t1" 'BEGIN { printf "%.1f", b / 1e6 / (c - a) }')
ship_s=$(awk -v a="$t0" -v c="$t1" 'BEGIN { printf "%.1f", c - a }')
echo "ship: $ship_line"
echo "ship: $total_bytes bytes in $ship_s s: $ship_mbs MB/s (target >= 20)"
read -r ship_user ship_sys <"$CACHE/ship.time"
awk -v b="$total_bytes" -v u="$ship_user" -v s="$ship_sys" -v a="$vl0" -v c="$vl1" 'BEGIN {
	r = u + s; v = c - a; gb = b / 1e9
	printf "ship CPU: runls %.1f s, VictoriaLogs (3 processes) %.1f s: %.0f + %.0f CPU-s a GB; two idle cores: at most %.1f MB/s\n",
		r, v, r / gb, v / gb, b / 1e6 / ((r + v) / 2) }'

mapfile -t queries < <("$BIN/rungen" -seed "$SEED" -queries "$QUERIES")
[ "${#queries[@]}" -gt 0 ] || die "no queries"

time_ms() {
	local t0 t1 rc=0
	t0=$EPOCHREALTIME
	"$@" >/dev/null 2>"$CACHE/last.err" || rc=$?
	t1=$EPOCHREALTIME
	if [ "$rc" -gt 1 ]; then
		echo "fleet.sh: $1 failed (exit $rc): $(head -c 300 "$CACHE/last.err")" >&2
		return 2
	fi
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }'
}

fleet_cmd() {
	# shellcheck disable=SC2086 # the query's words are separate arguments
	"$runls" search --fleet "$front" --episode "$EPISODE" --conversation "$CONVERSATION" --top-k "$TOPK" $1
}
rg_cmd() {
	local args=() w
	for w in $1; do args+=(-e "$w"); done
	rg --no-config -i -c "${args[@]}" "$runs"
}
one_cmd() {
	# shellcheck disable=SC2086
	"$runls" search --cache-dir "$CACHE/one-cache" --episode "$EPISODE" --conversation "$CONVERSATION" --top-k "$TOPK" "$runs/run-1" $1
}

one_cmd "warm up" >/dev/null 2>&1 || true
: >"$CACHE/fleet.ms"
: >"$CACHE/rg.ms"
: >"$CACHE/one.ms"
for _ in $(seq 1 "$ROUNDS"); do
	for q in "${queries[@]}"; do
		# A search that fails (the store's -search.maxQueryDuration, 30 s) is
		# counted, not timed; the others go on.
		time_ms fleet_cmd "$q" >>"$CACHE/fleet.ms" || fleet_failed=$((${fleet_failed:-0} + 1))
		time_ms rg_cmd "$q" >>"$CACHE/rg.ms"
		time_ms one_cmd "$q" >>"$CACHE/one.ms"
	done
done

stat_line() { # name file: median and p99 in ms
	sort -n "$2" | awk -v name="$1" '{ a[NR] = $1 } END {
		m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		p = a[int(NR * 0.99 + 0.999)]; if (p == "") p = a[NR]
		printf "%-34s median %8.1f ms   p99 %8.1f ms   (%d searches)\n", name, m, p, NR }'
}
echo "queries: ${#queries[@]} (rungen -queries $QUERIES), $ROUNDS rounds, --episode $EPISODE --conversation $CONVERSATION --top-k $TOPK"
stat_line "runls search --fleet ($RUNS runs)" "$CACHE/fleet.ms"
[ -z "${fleet_failed:-}" ] || echo "runls search --fleet: $fleet_failed searches failed (see above)"
stat_line "rg over the $RUNS folders" "$CACHE/rg.ms"
stat_line "runls search on one run (cached)" "$CACHE/one.ms"
echo "load after: $(uptime)"

# --follow: 200 appends, each searchable within 2 s (the fleet's Go test, its
# cluster of its own; the target checked here, not in the unit test).
follow_out=$(RUNLS_FLEET_FOLLOW_TARGET=2s go test -count=1 -run 'TestFollow$' -v ./fleet 2>&1) || follow_fail=1
echo "follow: $(echo "$follow_out" | grep -o 'append to searchable:.*' || echo "$follow_out" | tail -3)"

median=$(sort -n "$CACHE/fleet.ms" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
status=0
if awk -v m="$ship_mbs" 'BEGIN { exit !(m < 20) }'; then echo "FAIL: ship $ship_mbs MB/s < 20 MB/s"; status=1; fi
if awk -v m="$median" 'BEGIN { exit !(m > 100) }'; then echo "FAIL: fleet search median $median ms > 100 ms"; status=1; fi
if [ -n "${fleet_failed:-}" ]; then echo "FAIL: $fleet_failed fleet searches failed"; status=1; fi
if [ -n "${follow_fail:-}" ]; then echo "FAIL: follow: $(echo "$follow_out" | grep FAIL | head -2)"; status=1; fi
exit $status
