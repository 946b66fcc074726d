#!/usr/bin/env bash
# Measures what the persisted index gives a user (issue 18): the real
# `runls serve` over stdio opens the run with the cache off, with an empty
# cache folder, and again (the reopen); each timed from the process's start to
# the first answered run/search, with its anonymous memory (RssAnon) sampled
# during the indexing and after, and the cache entry's size; every figure as a
# ratio of the run's size, on a 1 GB / 800-file run and a 200 MB /
# 100,000-file run. It is bench/serve.sh with MODE=reopen (bench/serve
# -mode reopen, see bench/serve/reopen.go), and takes its environment.
#
#   bench/reopen.sh                        # both runs
#   SHAPES=small bench/reopen.sh           # one of them
#   RUNLS=/path/to/runls bench/reopen.sh   # another binary (the "before" figures)
#   BEFORE=/path/to/runls bench/reopen.sh  # its reopens A B A B beside this tree's (issue 33)
#   ARGS="-size 10GB -skip-no-cache -reopens 1" SHAPES=big bench/reopen.sh   # the 10 GB rows
#
# After the three opens, -reopens rounds (default 4) reopen the run through
# the server and the CLI, each beside one rg scan, with the load average
# (bench/serve/reopenab.go). It exits 1 when a target of issue 18 or 33
# fails on either run.
exec env MODE=reopen ARGS="${ARGS:-}${BEFORE:+ -before $BEFORE}" "$(dirname "$0")/serve.sh" "$@"
