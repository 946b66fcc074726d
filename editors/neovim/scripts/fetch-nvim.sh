#!/usr/bin/env bash
# Fetches the newest Neovim that Debian offers (sid) into a private folder, without
# touching the system: its own apt state, `apt-get download`, `dpkg-deb -x`. The
# binaries need a newer C library than the machine's, so they run through the dynamic
# loader unpacked from sid's own libc6 (see scripts/nvim, written at the end).
#
# Usage: fetch-nvim.sh [CACHE_DIR]   (default ${XDG_CACHE_HOME:-$HOME/.cache}/runls-test/nvim-sid)
# Prints the path of the wrapper script on its last line. Reuses a complete fetch.
set -euo pipefail

SUITE=${RUNLS_NVIM_SUITE:-sid}
MIRROR=${RUNLS_NVIM_MIRROR:-http://deb.debian.org/debian}
CACHE=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/runls-test/nvim-$SUITE}
ROOT=$CACHE/root
WRAPPER=$CACHE/nvim

if [[ -x $WRAPPER && -f $CACHE/.complete ]]; then
  echo "$WRAPPER"
  exit 0
fi

# Two test runs on one machine fetch once: the second waits, then finds it complete.
mkdir -p "$CACHE"
if command -v flock >/dev/null; then
  exec 9>"$CACHE.lock"
  flock 9
  if [[ -x $WRAPPER && -f $CACHE/.complete ]]; then
    echo "$WRAPPER"
    exit 0
  fi
fi

command -v apt-get >/dev/null || { echo "fetch-nvim: apt-get not found (a Debian-like system is needed)" >&2; exit 2; }
command -v dpkg-deb >/dev/null || { echo "fetch-nvim: dpkg-deb not found" >&2; exit 2; }

APT=$CACHE/apt
rm -rf "$ROOT" "$CACHE/debs" "$CACHE/.complete"
mkdir -p "$APT/etc/apt.conf.d" "$APT/etc/preferences.d" "$APT/etc/sources.list.d" "$APT/etc/trusted.gpg.d" \
  "$APT/lists/partial" "$APT/cache/archives/partial" "$CACHE/debs" "$ROOT"
: >"$APT/status"

keyring=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb [signed-by=$keyring] $MIRROR $SUITE main" >"$APT/etc/sources.list"

opts=(
  -o "Dir::Etc=$APT/etc"
  -o "Dir::Etc::sourcelist=$APT/etc/sources.list"
  -o "Dir::Etc::sourceparts=$APT/etc/sources.list.d"
  -o "Dir::Etc::parts=$APT/etc/apt.conf.d"
  -o "Dir::Etc::preferencesparts=$APT/etc/preferences.d"
  -o "Dir::State=$APT"
  -o "Dir::State::lists=$APT/lists"
  -o "Dir::State::status=$APT/status"
  -o "Dir::Cache=$APT/cache"
  -o "Debug::NoLocking=1"
  -o "APT::Sandbox::User=root"
  -o "Acquire::Languages=none"
  -o "APT::Architecture=amd64"
  -o "APT::Architectures=amd64"
)

echo "fetch-nvim: apt-get update ($SUITE)" >&2
apt-get "${opts[@]}" -qq update >&2

# The tree-sitter library's package name carries its version and changes per suite:
# take it from neovim's own Depends line.
ts=$(apt-cache "${opts[@]}" show neovim | sed -n 's/^Depends: //p' | head -1 | tr ',' '\n' |
  sed -n 's/^ *\(libtree-sitter0[^ ]*\).*/\1/p' | head -1)
[[ -n $ts ]] || { echo "fetch-nvim: no libtree-sitter package named in neovim's Depends" >&2; exit 1; }

pkgs=(neovim neovim-runtime libc6 libgcc-s1 libluajit-5.1-2 libluajit-5.1-common libmsgpack-c2
  libunibilium4 libuv1t64 libvterm0 lua-lpeg lua-luv libutf8proc3 "$ts")
echo "fetch-nvim: downloading ${pkgs[*]}" >&2
(cd "$CACHE/debs" && apt-get "${opts[@]}" -qq download "${pkgs[@]}" >&2)

for deb in "$CACHE"/debs/*.deb; do
  dpkg-deb -x "$deb" "$ROOT"
done

lib=$ROOT/usr/lib/x86_64-linux-gnu
loader=$lib/ld-linux-x86-64.so.2
[[ -e $loader ]] || loader=$ROOT/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
[[ -e $loader && -x $ROOT/usr/bin/nvim ]] || { echo "fetch-nvim: unpacked tree lacks the loader or nvim" >&2; exit 1; }

# nvim derives the folder of its tree-sitter parsers (Debian puts them in
# /usr/lib/nvim/parser) from $VIM as "$VIM/../../lib/lib/nvim" here: point it at them,
# or :help (vimdoc) and Lua files fail to open with "Parser could not be created".
mkdir -p "$ROOT/usr/lib/lib"
ln -sfn ../nvim "$ROOT/usr/lib/lib/nvim"

# The private libraries are named only on the loader's --library-path, never in
# LD_LIBRARY_PATH, which would leak into the language server that Neovim starts.
cat >"$WRAPPER" <<WRAP
#!/bin/sh
# Runs the Neovim unpacked from Debian $SUITE by fetch-nvim.sh.
export VIM="$ROOT/usr/share/nvim"
export VIMRUNTIME="$ROOT/usr/share/nvim/runtime"
exec "$loader" --library-path "$lib:$ROOT/lib/x86_64-linux-gnu" "$ROOT/usr/bin/nvim" "\$@"
WRAP
chmod +x "$WRAPPER"
"$WRAPPER" --version | head -1 >&2
touch "$CACHE/.complete"
echo "$WRAPPER"
