#!/usr/bin/env bash
# The Emacs (Eglot) integration's test, one entry point for CI and `make test`:
#  1. installs Debian's emacs-nox and elpa-eglot when Emacs or Eglot is missing
#     (Emacs 29 and later have Eglot built in),
#  2. builds runls from this repository (or copies RUNLS_TEST_BIN when set),
#  3. runs test/runls-test.el in a headless Emacs on a copy of testdata/sample-run,
#     against what `runls check` prints for it,
# and prints a last line `N passed, N failed`; exits non-zero on any failure.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$here/../.." && pwd)

summary_fail() {
  echo "test.sh: $1" >&2
  echo "0 passed, 1 failed"
  exit 1
}

has_eglot() {
  command -v emacs >/dev/null &&
    emacs --batch -Q -l "$here/test/load-eglot.el" >/dev/null 2>&1
}
if ! has_eglot; then
  command -v apt-get >/dev/null || summary_fail "Emacs with Eglot is missing and apt-get is not here to install it"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "apt-get install emacs-nox elpa-eglot"
  log=$(mktemp)
  if ! { $sudo apt-get update -q >"$log" 2>&1 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q emacs-nox elpa-eglot >>"$log" 2>&1; }; then
    tail -20 "$log" >&2
    summary_fail "apt-get install emacs-nox elpa-eglot"
  fi
  has_eglot || summary_fail "Emacs still has no Eglot after apt-get install"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/runls-emacs-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [[ -n ${RUNLS_TEST_BIN:-} ]]; then
  mkdir -p "$tmp/bin" && cp "$RUNLS_TEST_BIN" "$tmp/bin/runls" || summary_fail "cannot copy $RUNLS_TEST_BIN"
else
  command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
  command -v go >/dev/null || summary_fail "go not found (needed to build runls)"
  (cd "$repo" && go build -o "$tmp/bin/runls" ./cmd/runls) || summary_fail "go build ./cmd/runls failed"
fi
cp -R "$repo/testdata/sample-run" "$tmp/run" || summary_fail "no testdata/sample-run"
# Nothing from the home folder is read or written; the index cache is the test's.
export HOME=$tmp/home XDG_CACHE_HOME=$tmp/cache RUNLS_CACHE_DIR=$tmp/cache/runls
mkdir -p "$HOME"
(cd "$tmp/run" && "$tmp/bin/runls" check .) >"$tmp/check.txt" 2>"$tmp/check.err"
[[ $? -le 1 ]] || { cat "$tmp/check.err" >&2; summary_fail "runls check failed"; }

emacs --version | head -1
RUNLS_TEST_BIN=$tmp/bin/runls RUNLS_TEST_RUN=$tmp/run RUNLS_TEST_CHECK=$tmp/check.txt \
  timeout "${RUNLS_TEST_TIMEOUT:-180}" emacs --batch -Q -l "$here/test/runls-test.el" 2>&1 | tee "$tmp/out.txt"
rc=${PIPESTATUS[0]}
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp/out.txt" | tail -1)
if [[ -z $last ]]; then
  echo "test.sh: the Emacs test ended without a summary (exit $rc)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
[[ $rc -eq 0 ]]
