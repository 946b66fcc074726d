#!/usr/bin/env bash
# Times `runls search` against `rg -i -c` on the same generated run.
#
#   bench/compare.sh                 # a 100MB run
#   SIZE=1GB ROUNDS=1 bench/compare.sh
#
# It generates a run with internal/rungen (cached under $CACHE, reused when the size,
# seed and generator sources are the same), builds runls, then over a fixed query set
# from the generator's vocabulary (frequent, middling and rare words, and phrases)
# runs rg and runls interleaved (rg, runls, rg, runls, ...) for $ROUNDS rounds and
# prints per-query medians, overall medians and p90s, and the ratios.
#
# `runls search` is one shot: it indexes the run, then answers. So its times here are
# "index+query"; the latency of a query on a built index is measured by the Go
# benchmarks of the retriever. rg is given every word of a query (`-e w1 -e w2 ...`),
# one scan of the run.
#
# Environment:
#   SIZE=100MB        run size (KB, MB, GB: powers of 1024)
#   SEED=1            generator seed
#   QUERIES=20        queries in the set
#   ROUNDS=3          timed rounds over the set
#   CACHE=/tmp/runls-bench   where runs and binaries go
#   RUNLS=path        use this runls binary instead of building ./cmd/runls
#   EPISODE=episode-2 CONVERSATION=conv-1   request fields, so records are evidence
#   TOPK=10
set -euo pipefail

SIZE=${SIZE:-100MB}
SEED=${SEED:-1}
QUERIES=${QUERIES:-20}
ROUNDS=${ROUNDS:-3}
CACHE=${CACHE:-/tmp/runls-bench}
EPISODE=${EPISODE:-episode-2}
CONVERSATION=${CONVERSATION:-conv-1}
TOPK=${TOPK:-10}

die() { echo "compare.sh: $*" >&2; exit 2; }

cd "$(dirname "$0")/.."
mkdir -p "$CACHE/bin"
# This invocation's binaries in a folder of its own: two benchmarks run at
# once (A B against another tree) must not build over each other's binary.
BIN=$(mktemp -d "$CACHE/bin/build.XXXXXX")
trap 'rm -rf "$BIN"' EXIT

if ! command -v rg >/dev/null; then
	[ "$(id -u)" = 0 ] || die "rg (ripgrep) is missing: apt-get install ripgrep"
	echo "installing ripgrep ..." >&2
	apt-get update -qq && apt-get install -y -qq ripgrep >/dev/null || die "could not install ripgrep"
fi

go build -o "$BIN/rungen" ./internal/rungen/cmd/rungen || die "could not build rungen"

# The cache key names what made the run: size, seed and the generator's sources.
gen_hash=$(cat internal/rungen/*.go | sha256sum | cut -c1-12)
run="$CACHE/run-$SIZE-seed$SEED-$gen_hash"
if [ ! -f "$run.done" ]; then
	rm -rf "$run"
	echo "generating $SIZE (seed $SEED) into $run ..." >&2
	"$BIN/rungen" -size "$SIZE" -seed "$SEED" -out "$run"
	touch "$run.done"
else
	echo "reusing $run" >&2
fi
run_bytes=$(find "$run" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')

if [ -n "${RUNLS:-}" ]; then
	runls=$RUNLS
	echo "using RUNLS=$runls" >&2
else
	runls="$BIN/runls"
	go build -o "$runls" ./cmd/runls || die "could not build ./cmd/runls (set RUNLS to a binary to use instead)"
fi

mapfile -t queries < <("$BIN/rungen" -seed "$SEED" -queries "$QUERIES")
[ "${#queries[@]}" -gt 0 ] || die "no queries"

# time_ms CMD...: runs CMD with output discarded, prints milliseconds; rg's and runls'
# exit status 1 ("nothing found") is not an error, 2 is.
time_ms() {
	local t0 t1 rc=0
	t0=$EPOCHREALTIME
	"$@" >/dev/null 2>"$CACHE/last.err" || rc=$?
	t1=$EPOCHREALTIME
	if [ "$rc" -gt 1 ]; then
		echo "compare.sh: $1 failed (exit $rc): $(head -c 300 "$CACHE/last.err")" >&2
		return 2
	fi
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }'
}

rg_cmd() {
	local args=() w
	for w in $1; do args+=(-e "$w"); done
	rg --no-config -i -c "${args[@]}" "$run"
}

runls_cmd() {
	# shellcheck disable=SC2086 # the query's words are separate arguments
	"$runls" search --episode "$EPISODE" --conversation "$CONVERSATION" --top-k "$TOPK" "$run" $1
}

echo "run: $run ($run_bytes bytes), ${#queries[@]} queries, $ROUNDS rounds" >&2
# Warm the page cache and check both commands work once before timing.
time_ms rg_cmd "${queries[0]}" >/dev/null || die "rg failed"
time_ms runls_cmd "${queries[0]}" >/dev/null || die "runls failed"

samples="$CACHE/samples.tsv"
: >"$samples"
for ((r = 1; r <= ROUNDS; r++)); do
	for i in "${!queries[@]}"; do
		q=${queries[$i]}
		t=$(time_ms rg_cmd "$q") || die "rg failed on query $q"
		printf 'rg\t%d\t%s\n' "$i" "$t" >>"$samples"
		t=$(time_ms runls_cmd "$q") || die "runls failed on query $q"
		printf 'runls\t%d\t%s\n' "$i" "$t" >>"$samples"
	done
	echo "round $r done" >&2
done

# Peak memory of one runls search (GNU time), when available.
rss=""
if [ -x /usr/bin/time ]; then
	rss=$(/usr/bin/time -f '%M' "$runls" search --episode "$EPISODE" --conversation "$CONVERSATION" \
		--top-k "$TOPK" "$run" ${queries[0]} 2>&1 >/dev/null | tail -1) || true
fi

printf '%s\n' "${queries[@]}" | awk -F'\t' -v samples="$samples" -v bytes="$run_bytes" -v rss="$rss" '
function median(arr, n,   i, j, t) {
	for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
	return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
function pct(arr, n, p,   i, j, t, k) {
	for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
	k = int(p * n + 0.999999); if (k < 1) k = 1; if (k > n) k = n
	return arr[k]
}
{ query[NR - 1] = $0 }
END {
	while ((getline line < samples) > 0) {
		split(line, f, "\t")
		tool = f[1]; q = f[2]; t = f[3] + 0
		n[tool, q]++; s[tool, q, n[tool, q]] = t
		all[tool, ++cnt[tool]] = t
	}
	printf "%-48s %12s %12s %10s\n", "query", "rg ms", "runls ms", "runls/rg"
	for (q = 0; q < NR; q++) {
		delete a; delete b
		for (i = 1; i <= n["rg", q]; i++) a[i] = s["rg", q, i]
		for (i = 1; i <= n["runls", q]; i++) b[i] = s["runls", q, i]
		mr = median(a, n["rg", q]); ml = median(b, n["runls", q])
		printf "%-48s %12.1f %12.1f %10.2f\n", substr(query[q], 1, 48), mr, ml, (mr > 0 ? ml / mr : 0)
	}
	delete a; delete b
	for (i = 1; i <= cnt["rg"]; i++) a[i] = all["rg", i]
	for (i = 1; i <= cnt["runls"]; i++) b[i] = all["runls", i]
	mr = median(a, cnt["rg"]); ml = median(b, cnt["runls"])
	pr = pct(a, cnt["rg"], 0.9); pl = pct(b, cnt["runls"], 0.9)
	printf "\nall queries (%d samples each)\n", cnt["rg"]
	printf "  median: rg %.1f ms, runls (index+query) %.1f ms, runls/rg %.2f\n", mr, ml, ml / mr
	printf "  p90:    rg %.1f ms, runls (index+query) %.1f ms, runls/rg %.2f\n", pr, pl, pl / pr
	printf "  rg scan: %.0f MB/s; runls index+query: %.0f MB/s\n", bytes / 1e6 / (mr / 1000), bytes / 1e6 / (ml / 1000)
	if (rss != "" && rss ~ /^[0-9]+$/)
		printf "  runls peak RSS: %.0f MB (%.2f bytes per run byte)\n", rss / 1024, rss * 1024 / bytes
}'
