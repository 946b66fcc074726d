#!/usr/bin/env bash
# Runs every Go fuzz target of the repository for a set time each and prints how
# long each ran, how many inputs it tried, and whether it found anything.
#
#   bench/fuzz.sh                      # 30 s a target
#   FUZZTIME=5m bench/fuzz.sh          # longer
#   FUZZTIME=10s bench/fuzz.sh ./lsp   # only the targets of some packages
#
# The targets are found with `go test -list 'Fuzz.*'`. A finding is written by Go
# under the package's testdata/fuzz/<Target>/ (commit it once the bug is fixed: it
# becomes a seed that `go test` runs every time); its output is kept in $OUT.
#
# Environment:
#   FUZZTIME=30s     time per target (a Go duration, or Nx for N inputs)
#   WORKERS=1        fuzzing processes per target (-parallel); the machines are shared
#   MINIMIZETIME=20x inputs tried to minimize each new input (-fuzzminimizetime).
#                    Go's default of 60s eats a short run: the server's targets find
#                    "new coverage" every few inputs (its goroutines do not run the
#                    same way twice), and the count shown does not move while a worker
#                    minimizes. A finding is saved whole either way.
#   OUT=/tmp/runls-fuzz   where each target's output goes
# Exit status: 0 when no target found anything, 1 otherwise.
set -uo pipefail

FUZZTIME=${FUZZTIME:-30s}
WORKERS=${WORKERS:-1}
MINIMIZETIME=${MINIMIZETIME:-20x}
OUT=${OUT:-/tmp/runls-fuzz}
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
pkgs=("$@")
[ ${#pkgs[@]} -eq 0 ] && pkgs=(./...)

# "pkg target" pairs: `go test -list` prints a package's names, then "ok <pkg> ...".
pairs=$(go test -list 'Fuzz.*' "${pkgs[@]}" | awk '
	/^Fuzz/ { names[n++] = $1; next }
	/^ok / { for (i = 0; i < n; i++) print $2, names[i]; n = 0 }')
if [ -z "$pairs" ]; then
	echo "no fuzz targets found" >&2
	exit 1
fi

found=0
printf '%-36s %-26s %9s %12s  %s\n' target package ran inputs result
while read -r pkg target; do
	log="$OUT/$(echo "$pkg" | tr / _).$target.log"
	go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$MINIMIZETIME" -parallel "$WORKERS" "$pkg" >"$log" 2>&1
	rc=$?
	# The fuzzer's own clock: the time it fuzzed, without the build.
	ran=$(grep -o 'elapsed: [0-9hms.]*' "$log" | tail -1 | awk '{print $2}')
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}')
	if [ $rc -eq 0 ]; then
		result="no finding"
	else
		found=1
		result="FOUND: $(grep -m1 -o 'testdata/fuzz/[^ ]*' "$log" || grep -m1 -E 'FAIL|panic|Error' "$log")  (log: $log)"
	fi
	printf '%-36s %-26s %9s %12s  %s\n' "$target" "${pkg#runls/}" "${ran:-?}" "${execs:-?}" "$result"
done <<<"$pairs"
exit $found
