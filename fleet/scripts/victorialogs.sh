#!/usr/bin/env bash
# The VictoriaLogs cluster of the fleet's tests and benchmark (spec §16):
#   victorialogs.sh build              build the pinned VictoriaLogs once into a
#                                      cache folder keyed by its version; print its path
#   victorialogs.sh start DIR [FLAGS]  start 2 storage nodes and 1 front node on free
#                                      127.0.0.1 ports, data under DIR; FLAGS go to the
#                                      front (e.g. -search.allowPartialResponse); write
#                                      DIR/cluster.env (FRONT, STORAGE1, STORAGE2 and PIDs)
#   victorialogs.sh stop DIR           stop the three by their PIDs
# VictoriaLogs is a test-time server: runls speaks its HTTP API with the
# standard library and links none of it.
set -euo pipefail

VERSION=v1.52.2
CACHE=${RUNLS_VL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/runls-victorialogs}/$VERSION
BIN=$CACHE/victoria-logs

die() { echo "victorialogs.sh: $*" >&2; exit 1; }

build() {
	if [ -x "$BIN" ]; then echo "$BIN"; return; fi
	command -v go >/dev/null || die "no go on PATH to build VictoriaLogs $VERSION"
	mkdir -p "$CACHE"
	echo "victorialogs.sh: building VictoriaLogs $VERSION into $CACHE (about 90 s, once)" >&2
	(cd "$CACHE" && GOBIN="$CACHE" GOFLAGS=-mod=mod go install "github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs@$VERSION") >&2 ||
		die "go install of VictoriaLogs $VERSION failed"
	[ -x "$BIN" ] || die "go install left no $BIN"
	echo "$BIN"
}

# free_port prints a port nothing listens on (the kernel's ephemeral range is avoided).
free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 30000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
	done
	die "no free port found"
}

wait_health() {
	local url=$1 pid=$2
	for _ in $(seq 1 300); do
		kill -0 "$pid" 2>/dev/null || return 1
		if [ "$(curl -fsS "$url/health" 2>/dev/null || true)" = OK ]; then return 0; fi
		sleep 0.1
	done
	return 1
}

# node NAME PORT DATA [FLAGS...]: start one node, wait for its health; print its PID.
node() {
	local name=$1 port=$2 data=$3; shift 3
	mkdir -p "$data"
	"$BIN" -httpListenAddr="127.0.0.1:$port" -storageDataPath="$data" -retentionPeriod=100y \
		-loggerLevel=WARN "$@" >"$DIR/$name.log" 2>&1 &
	local pid=$!
	if ! wait_health "http://127.0.0.1:$port" "$pid"; then
		kill "$pid" 2>/dev/null || true
		return 1
	fi
	echo "$pid"
}

start() {
	DIR=$1; shift
	[ -n "$DIR" ] || die "start needs a folder"
	mkdir -p "$DIR"
	DIR=$(cd "$DIR" && pwd)
	build >/dev/null
	command -v curl >/dev/null || die "no curl on PATH"
	local p1 p2 p0 s1 s2 f
	for attempt in 1 2 3; do
		p1=$(free_port); p2=$(free_port); p0=$(free_port)
		s1=$(node storage1 "$p1" "$DIR/storage1") || continue
		s2=$(node storage2 "$p2" "$DIR/storage2") || { kill "$s1"; continue; }
		f=$(node front "$p0" "$DIR/front" -storageNode="127.0.0.1:$p1,127.0.0.1:$p2" "$@") || { kill "$s1" "$s2"; continue; }
		cat >"$DIR/cluster.env" <<ENV
FRONT=http://127.0.0.1:$p0
STORAGE1=http://127.0.0.1:$p1
STORAGE2=http://127.0.0.1:$p2
FRONT_PID=$f
STORAGE1_PID=$s1
STORAGE2_PID=$s2
ENV
		echo "http://127.0.0.1:$p0"
		return
	done
	die "the cluster did not start (logs in $DIR)"
}

stop() {
	DIR=$1
	[ -f "$DIR/cluster.env" ] || return 0
	# shellcheck disable=SC1091
	. "$DIR/cluster.env"
	for pid in "$FRONT_PID" "$STORAGE1_PID" "$STORAGE2_PID"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "$FRONT_PID" "$STORAGE1_PID" "$STORAGE2_PID"; do
		for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	done
}

case "${1:-}" in
build) build ;;
start) shift; start "$@" ;;
stop) shift; stop "$@" ;;
*) die "usage: victorialogs.sh build | start DIR [FRONT_FLAGS...] | stop DIR" ;;
esac
