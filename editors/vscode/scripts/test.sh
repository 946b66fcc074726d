#!/usr/bin/env bash
# Every test of the VS Code extension, for CI and for `make test`: on a Debian
# bookworm machine with Go and Node 20 it installs what is missing (apt packages,
# npm packages, code-server in a cache folder outside the repo), builds runls, and
# runs the unit tests, the integration test against the real server, packaging and
# the .vsix check, and the end-to-end test in code-server + chromium.
# Last line: "N passed, N failed"; exit status 1 on any failure.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${RUNLS_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/runls-test}
artifacts=${ARTIFACTS:-$here/test-artifacts}
passed=0
failed=0

say() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }
finish() {
  if [[ -n ${cs_pid:-} ]] && kill -0 "$cs_pid" 2>/dev/null; then
    echo "waiting for the code-server install to finish (it leaves no half install behind)"
    wait "$cs_pid"
  fi
  echo
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
  exit $?
}

# run_node_tests NAME SECONDS ARGS...: runs `node --test` with the TAP reporter
# (killed after SECONDS), adds its counts, keeps the TAP under test-artifacts/ and
# prints the failures.
run_node_tests() {
  local name=$1 limit=$2
  shift 2
  local tap="$artifacts/$name.tap"
  timeout --kill-after=10 "$limit" node --test --test-reporter=tap --test-concurrency=1 "$@" >"$tap" 2>&1
  local rc=$?
  [[ $rc -eq 124 || $rc -eq 137 ]] && echo "$name: killed after ${limit}s" >>"$tap"
  local p f
  p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tap" | tail -1)
  f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tap" | tail -1)
  if [[ -z $p || -z $f ]]; then
    tail -40 "$tap" >&2
    fail "$name: the test runner gave no summary (exit $rc)"
    return
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  echo "$name: $p passed, $f failed"
  if [[ $f -ne 0 || $rc -ne 0 ]]; then
    grep -v -E '^\s+duration_ms' "$tap" | awk '/^ *not ok/{show=1} /^ *ok /{show=0} show' | head -120 >&2
    [[ $f -eq 0 ]] && fail "$name: node --test exited $rc"
  fi
}

# --- what the tests need ------------------------------------------------------
say "dependencies"
mkdir -p "$artifacts" "$cache"
need_apt=()
for pkg in chromium ripgrep build-essential python3 pkg-config libkrb5-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [[ ${#need_apt[@]} -gt 0 ]]; then
  echo "apt-get install ${need_apt[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  if ! { $sudo apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${need_apt[@]}" >"$artifacts/apt.log" 2>&1; }; then
    tail -20 "$artifacts/apt.log" >&2
    fail "apt-get install ${need_apt[*]}"
    finish
  fi
fi
# Go's tarball install puts it in /usr/local/go/bin, which a non-login shell may lack.
if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
for tool in go node npm; do
  command -v "$tool" >/dev/null || { fail "$tool is not installed"; finish; }
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
[[ $node_major == 20 ]] || echo "warning: Node $node_major; code-server 4.100.3 installs only on Node 20" >&2

# code-server takes the longest to install (native builds; minutes on a cold
# machine): it installs in the background while the rest builds and tests.
cs_log="$artifacts/install-code-server.log"
"$here/scripts/install-code-server.sh" "$cache" >"$cs_log" 2>&1 &
cs_pid=$!

cd "$here" || exit 1
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "npm ci"
  npm ci --no-audit --no-fund >"$artifacts/npm-ci.log" 2>&1 || { tail -30 "$artifacts/npm-ci.log" >&2; fail "npm ci"; finish; }
fi

bin_dir=$(mktemp -d)
trap 'rm -rf "$bin_dir"' EXIT
echo "go build ./cmd/runls"
if ! (cd "$repo" && go build -o "$bin_dir/runls" ./cmd/runls) 2>"$artifacts/go-build.log"; then
  cat "$artifacts/go-build.log" >&2
  fail "go build ./cmd/runls"
  finish
fi
export RUNLS_BIN="$bin_dir/runls"
# The same server built with the runls_holdindex tag: the end-to-end test of answers
# made while a run is indexed holds its first index with it (retriever/hold_inject.go).
if (cd "$repo" && go build -tags runls_holdindex -o "$bin_dir/runls-hold" ./cmd/runls) 2>>"$artifacts/go-build.log"; then
  export RUNLS_HOLD_BIN="$bin_dir/runls-hold"
fi
# The end-to-end test writes a generated run with it (internal/rungen).
if (cd "$repo" && go build -o "$bin_dir/rungen" ./internal/rungen/cmd/rungen) 2>>"$artifacts/go-build.log"; then
  export RUNLS_RUNGEN="$bin_dir/rungen"
fi
# The servers these tests start keep their cache entries here, never in the user's
# cache folder (make test sets its own; this covers the script run alone).
if [[ -z ${RUNLS_CACHE_DIR:-} ]]; then
  export RUNLS_CACHE_DIR="$bin_dir/cache"
fi

# --- unit and integration -----------------------------------------------------
say "typecheck and compile tests"
if npx tsc -p . --noEmit >"$artifacts/tsc.log" 2>&1 && npx tsc -p tsconfig.test.json >>"$artifacts/tsc.log" 2>&1; then
  passed=$((passed + 1))
  echo "tsc: ok"
else
  cat "$artifacts/tsc.log" >&2
  fail "tsc"
  finish
fi

say "unit tests"
run_node_tests unit 120 out/test/unit/

say "integration test (real runls serve, vscode-jsonrpc)"
run_node_tests integration 300 out/test/integration/

# --- package ------------------------------------------------------------------
say "package (.vsix)"
rm -f runls.vsix
if npm run package >"$artifacts/package.log" 2>&1 && [[ -f runls.vsix ]]; then
  passed=$((passed + 1))
  echo "npm run package: ok ($(wc -c <runls.vsix) bytes)"
  cp runls.vsix "$artifacts/runls.vsix"
  run_node_tests vsix 60 test/vsix.test.mjs
else
  tail -30 "$artifacts/package.log" >&2
  fail "npm run package"
fi

# --- end to end ---------------------------------------------------------------
say "end-to-end (code-server 4.100.3 + chromium)"
if [[ ! -f runls.vsix ]]; then
  fail "e2e: no .vsix to install"
elif wait "$cs_pid" && code_server=$(tail -1 "$cs_log") && [[ -x $code_server ]]; then
  CODE_SERVER="$code_server" VSIX="$here/runls.vsix" ARTIFACTS="$artifacts" run_node_tests e2e 420 test/e2e/
  # A killed test leaves code-server (its own process group) behind: end it.
  if [[ -f $artifacts/code-server.pgid ]]; then
    kill -- -"$(cat "$artifacts/code-server.pgid")" 2>/dev/null
    rm -f "$artifacts/code-server.pgid"
  fi
  echo "screenshots: $artifacts/*.png"
else
  tail -30 "$cs_log" >&2
  fail "e2e: installing code-server"
fi

finish
