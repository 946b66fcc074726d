#!/usr/bin/env bash
# The cross-implementation check of `runls mcp`, for CI and `make test`: the
# TypeScript MCP SDK's client (npm @modelcontextprotocol/sdk, on Node 20)
# against the built binary. Installs the npm packages when they are missing or
# the lock file changed, builds runls into a temporary folder, and runs
# mcp.test.mjs with node --test.
# Last line: "N passed, N failed"; exit status 1 on any failure.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
artifacts=${ARTIFACTS:-$here/test-artifacts}
mkdir -p "$artifacts"
fail() {
  echo "FAIL: $*" >&2
  echo
  echo "0 passed, 1 failed"
  exit 1
}

command -v node >/dev/null || fail "node is not installed (Node 20 is wanted)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[[ $node_major -ge 20 ]] || fail "Node $node_major; the MCP SDK's client is tested on Node 20"

cd "$here" || exit 1
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "npm ci"
  npm ci --no-audit --no-fund >"$artifacts/npm-ci.log" 2>&1 || { tail -30 "$artifacts/npm-ci.log" >&2; fail "npm ci"; }
fi

bin_dir=$(mktemp -d)
trap 'rm -rf "$bin_dir"' EXIT
echo "go build ./cmd/runls"
(cd "$repo" && go build -o "$bin_dir/runls" ./cmd/runls) 2>"$artifacts/go-build.log" || { cat "$artifacts/go-build.log" >&2; fail "go build"; }
# Built with -tags runls_holdindex: the test of answers while the run is indexed holds
# its first index with it (retriever/hold_inject.go).
(cd "$repo" && go build -tags runls_holdindex -o "$bin_dir/runls-hold" ./cmd/runls) 2>>"$artifacts/go-build.log" && export RUNLS_HOLD_BIN="$bin_dir/runls-hold"

tap="$artifacts/mcp-tsclient.tap"
RUNLS_BIN="$bin_dir/runls" timeout --kill-after=10 120 node --test --test-reporter=tap "$here/mcp.test.mjs" >"$tap" 2>&1
rc=$?
passed=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tap" | tail -1)
failed=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tap" | tail -1)
if [[ -z $passed || -z $failed ]]; then
  tail -40 "$tap" >&2
  fail "node --test gave no summary (exit $rc)"
fi
if [[ $failed -ne 0 || $rc -ne 0 ]]; then
  grep -v -E '^\s+duration_ms' "$tap" | awk '/^ *not ok/{show=1} /^ *ok /{show=0} show' | head -80 >&2
  [[ $failed -eq 0 ]] && failed=1
fi
echo "mcp-tsclient: node --test on Node $node_major"
echo
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
