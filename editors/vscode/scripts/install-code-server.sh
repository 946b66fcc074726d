#!/usr/bin/env bash
# Installs code-server (VS Code in a browser) into a cache folder outside the repo,
# for the end-to-end test. Idempotent: an existing complete install is reused.
# Usage: install-code-server.sh CACHE_DIR   -> prints the code-server binary path last.
set -euo pipefail

CS_VERSION=4.100.3 # newest release whose install runs on Node 20 (VS Code 1.100.3)
# code-server's lib/vscode/npm-shrinkwrap.json pins @vscode/ripgrep 1.15.11, whose
# postinstall downloads ripgrep v13.0.0-10 from a code host this machine cannot reach.
# It first looks for the archive in os.tmpdir()/vscode-ripgrep-cache-<version>/.
RG_PKG_VERSION=1.15.11
RG_ASSET=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz

cache=${1:?cache dir}
prefix="$cache/code-server-$CS_VERSION"
bin="$prefix/node_modules/.bin/code-server"
marker="$prefix/.complete"

mkdir -p "$cache"
# One install at a time per cache folder (two test runs may start together).
exec 9>"$cache/.install.lock"
flock 9

if [[ -f $marker && -x $bin ]]; then
  echo "$bin"
  exit 0
fi

rg_bin=$(command -v rg || true)
if [[ -z $rg_bin ]]; then
  echo "install-code-server: rg (Debian package ripgrep) is required" >&2
  exit 1
fi
rg_cache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-$RG_PKG_VERSION"
if [[ ! -s $rg_cache/$RG_ASSET ]]; then
  mkdir -p "$rg_cache"
  work=$(mktemp -d)
  cp "$rg_bin" "$work/rg"
  tar czf "$rg_cache/$RG_ASSET" -C "$work" rg
  rm -rf "$work"
fi

rm -rf "$prefix"
mkdir -p "$prefix"
echo '{"name":"runls-test-code-server","private":true}' > "$prefix/package.json"
# node-pty's install runs `npx node-gyp`, which waits for a "yes" without a terminal.
(
  cd "$prefix"
  npm_config_yes=true npm install --no-audit --no-fund --unsafe-perm \
    "code-server@$CS_VERSION" >"$prefix/install.log" 2>&1
) || {
  echo "install-code-server: npm install failed; last lines of $prefix/install.log:" >&2
  tail -30 "$prefix/install.log" >&2
  exit 1
}
touch "$marker"
echo "$bin"
