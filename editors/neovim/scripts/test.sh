#!/usr/bin/env bash
# The Neovim plugin's tests, one entry point for CI:
#  1. gets a Neovim >= 0.11 (RUNLS_TEST_NVIM if set, else Debian sid's, fetched once
#     into ${XDG_CACHE_HOME:-$HOME/.cache}/runls-test/nvim-sid by fetch-nvim.sh),
#  2. builds runls from this repository (or copies RUNLS_TEST_BIN when set),
#  3. runs tests/run.lua headless on a scratch copy of testdata/sample-run,
#  4. runs bench/nvim.sh's quick run (QUICK=1) and checks its figures,
# and prints a last line `N passed, N failed`; exits non-zero on any failure.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$here/../.." && pwd)

summary_fail() {
  echo "test.sh: $1" >&2
  echo "0 passed, 1 failed"
  exit 1
}

nvim=${RUNLS_TEST_NVIM:-}
if [[ -z $nvim ]]; then
  nvim=$("$here/scripts/fetch-nvim.sh" | tail -1) || summary_fail "could not fetch Neovim"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/runls-nvim-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [[ -n ${RUNLS_TEST_BIN:-} ]]; then
  mkdir -p "$tmp/bin" && cp "$RUNLS_TEST_BIN" "$tmp/bin/runls" || summary_fail "cannot copy $RUNLS_TEST_BIN"
else
  # The Go toolchain's usual place when a login PATH is not set up (CI).
  command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
  command -v go >/dev/null || summary_fail "go not found (needed to build runls)"
  (cd "$repo" && go build -o "$tmp/bin/runls" ./cmd/runls) || summary_fail "go build ./cmd/runls failed"
fi
# The same server built with the runls_holdindex tag: with RUNLS_HOLD_INDEX=path its
# first index stops after one batch until that file exists (retriever/hold_inject.go),
# for the test of answers made while a run is indexed; it skips, saying so, without it.
if (cd "$repo" && go build -tags runls_holdindex -o "$tmp/bin/runls-hold" ./cmd/runls 2>/dev/null); then
  export RUNLS_TEST_HOLD_BIN=$tmp/bin/runls-hold
else
  echo "test.sh: go build -tags runls_holdindex failed: the partial-answer test skips" >&2
fi
# A generated run (internal/rungen) for the tests that start from its ERROR record at
# line 246 of episode-2/bob/bob.log; the tests skip, saying so, without it.
if (cd "$repo" && go build -o "$tmp/bin/rungen" ./internal/rungen/cmd/rungen 2>/dev/null) &&
  "$tmp/bin/rungen" -size 2MB -seed 4 -episodes 3 -agents 3 -out "$tmp/gen" >/dev/null; then
  export RUNLS_TEST_GEN=$tmp/gen
else
  echo "test.sh: no generated run (go build ./internal/rungen/cmd/rungen failed): its tests skip" >&2
fi
# Nothing from the home folder is read or written.
mkdir -p "$tmp/xdg/config" "$tmp/xdg/data" "$tmp/xdg/state" "$tmp/xdg/cache"
export XDG_CONFIG_HOME=$tmp/xdg/config XDG_DATA_HOME=$tmp/xdg/data XDG_STATE_HOME=$tmp/xdg/state XDG_CACHE_HOME=$tmp/xdg/cache
export RUNLS_TEST_PLUGIN=$here RUNLS_TEST_BIN=$tmp/bin/runls RUNLS_TEST_INTERPRETER=$repo/testdata/interpreter.json

"$nvim" --headless -u NONE -i NONE -n --version | head -1

# RUNLS_TEST_ONLY's word `bench` names the bench check below, not a suite's test: it is
# taken out of the suites' filter, and the suites are skipped when nothing else is left.
only=${RUNLS_TEST_ONLY:-} bench=
if [[ -z $only ]]; then
  bench=1
else
  IFS=, read -ra words <<<"$only"
  only=
  for w in "${words[@]}"; do
    if [[ $w == bench ]]; then
      bench=1
    elif [[ -n $w ]]; then
      only=${only:+$only,}$w
    fi
  done
fi
suites=1
[[ -n ${RUNLS_TEST_ONLY:-} && -z $only ]] && suites=

passed=0 failed=0
# run_suite NAME MODE ONLY: one Neovim on a fresh copy of the sample run.
run_suite() {
  local name=$1 mode=$2 only=$3
  local dir=$tmp/$name
  mkdir -p "$dir/scratch"
  cp -R "$repo/testdata/sample-run" "$dir/run" || summary_fail "no testdata/sample-run"
  echo "== $name"
  local out=$dir/out.txt
  RUNLS_TEST_MODE=$mode RUNLS_TEST_ONLY=$only RUNLS_TEST_RUN=$dir/run RUNLS_TEST_TMP=$dir/scratch \
    timeout "${RUNLS_TEST_TIMEOUT:-240}" "$nvim" --headless -u NONE -i NONE -n \
    -c "lua local ok, err = pcall(dofile, '$here/tests/run.lua'); if not ok then io.stdout:write(tostring(err) .. '\\n'); vim.cmd('cquit! 1') end" \
    >"$out" 2>&1 </dev/null
  local code=$?
  # The suite's own summary line is replaced by the total at the end.
  grep -vE '^[0-9]+ passed, [0-9]+ failed$' "$out"
  local last p f
  last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
  if [[ -z $last ]]; then
    echo "FAILED $name: Neovim exited ($code) without a summary"
    failed=$((failed + 1))
    return
  fi
  p=${last%% *}; f=${last#*, }; f=${f%% *}
  passed=$((passed + p)); failed=$((failed + f))
  if [[ $code -ne 0 && $f -eq 0 ]]; then
    echo "FAILED $name: Neovim exited $code"
    failed=$((failed + 1))
  fi
}

if [[ -n $suites ]]; then
  # Every test, configured with require('runls').setup().
  run_suite setup setup "$only"
  # Configured only with vim.lsp.config() + vim.lsp.enable(), as a user without setup().
  run_suite enable enable "${only:-attaches,fills quickfix like,starts the server for,stack trace,conversation change}"

  # Installed as a package and loaded with :packadd.
  run_suite packadd packadd "${only:-filetypes,attaches,fills quickfix like,syntax groups,completion}"
fi

# bench/nvim.sh (issue 33's latency through this plugin) in its quick run on the sample
# run, so that it cannot rot: it exits 0 (no request failed, answers not all empty) and
# prints every figure, each time nonzero. About a second; under the suites' timeout (a
# server that hangs ends it: timeout signals its process group, Neovim and the server too).
bench_check() {
  local out=$1 want
  # A time of at least 0.001 ms: a broken clock (t1 - t0) prints 0.000.
  local t='([0-9]*[1-9][0-9]*\.[0-9]+|[0-9]+\.[0-9]*[1-9][0-9]*) ms'
  for want in \
    "^with the context \(Neovim [0-9.]+.*ready \(run/info done\) [0-9.]+ s" \
    "^without the context \(Neovim [0-9.]+.*ready \(run/info done\) [0-9.]+ s" \
    "^  diagnostics published to Neovim: [0-9]+ before the rounds, [0-9]+ during them$" \
    "^  CPU a request \(6 timed, .*the server [0-9]+ µs, Neovim [0-9]+ µs; Neovim's a search [0-9.]+ µs, an unknown method [0-9.]+ µs$" \
    "^deploy database migration +$t +$t +$t +$t +$t$" \
    "^billing service +$t +$t +$t +$t +$t$" \
    "^slowest, top 10: .*, median $t$" \
    "^slowest, no context, top 10: .*, median $t$" \
    "^the set's median, top 5: $t, [0-9.]+x the round trip $t" \
    "^the set's median, top 10: $t, [0-9.]+x the round trip $t" \
    "^the set's median, no context, top 5: $t, [0-9.]+x the round trip $t" \
    "^the set's median, no context, top 10: $t, [0-9.]+x the round trip $t" \
    "^unknown method, context \(2\): median $t" \
    "^unknown method, no context \(2\): median $t" \
    "^answers with items: top 5 2 of 2, top 10 2 of 2, no context, top 5 2 of 2, no context, top 10 2 of 2; failed requests: 0$"; do
    grep -qE "$want" "$out" || { echo "  no line matching: $want"; return 1; }
  done
  if grep -qE '^(ERROR|FAIL)' "$out"; then
    echo "  an ERROR or FAIL line"
    return 1
  fi
}
if [[ -n $bench ]]; then
  echo "== bench"
  if QUICK=1 NVIM=$nvim timeout "${RUNLS_TEST_TIMEOUT:-240}" "$repo/bench/nvim.sh" "$RUNLS_TEST_BIN" >"$tmp/bench.txt" 2>&1 &&
    bench_check "$tmp/bench.txt"; then
    echo "ok     bench/nvim.sh QUICK=1 prints every figure, no request failed"
    passed=$((passed + 1))
  else
    sed 's/^/  | /' "$tmp/bench.txt"
    echo "FAILED bench/nvim.sh QUICK=1"
    failed=$((failed + 1))
  fi
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
