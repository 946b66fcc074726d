//go:build linux

package main

// The storm: templated warnings added to the working copy of the run, as a
// rate-limited tool writes them (issue 33), and the query that asks for them.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// stormQuery asks for the storm's lines in the unfielded episode, where
// none of them is evidence (spec §5 rule 4), so that a server asks the
// engine twice (§12's lifted ranking, then the request's own).
var stormQuery = timedQuery{text: "rate limited retrying", episode: "episode-1", conv: "conv-1"}

// addStorm appends lines templated warnings, spread evenly, to the .log
// files among files (paths relative to root), each with its file's own
// day, agent and a conversation (none in episode-1, which rungen writes
// unfielded), other numbers in each: a few dozen texts of one shape, tied
// for the best score of stormQuery by the thousand. It returns the bytes
// added.
func addStorm(root string, files []agentFile, lines int) (int64, error) {
	var logs []agentFile
	for _, f := range files {
		if strings.HasSuffix(f.rel, ".log") {
			logs = append(logs, f)
		}
	}
	if len(logs) == 0 || lines <= 0 {
		return 0, nil
	}
	r := rand.New(rand.NewPCG(33, 1))
	var added int64
	for i, f := range logs {
		n := lines/len(logs) + b2i(i < lines%len(logs))
		parts := strings.Split(f.rel, "/")
		episode, agent := parts[0], parts[1]
		day, err := lastDay(filepath.Join(root, f.rel))
		if err != nil {
			return added, err
		}
		var b strings.Builder
		for j := range n {
			conv := ""
			if episode != "episode-1" {
				if c := r.IntN(13); c == 0 {
					conv = "[-] "
				} else {
					conv = fmt.Sprintf("[conv-%d] ", c)
				}
			}
			fmt.Fprintf(&b, "%s 23:%02d:%02d.%03d WARN  [running] %s%s Tool call: rate limited (attempt %d), retrying in %ds\n",
				day, j/60%60, j%60, r.IntN(1000), conv, strings.ToUpper(agent[:1])+agent[1:], 1+r.IntN(9), []int{1, 2, 4, 8, 16, 30, 60}[r.IntN(7)])
		}
		if err := appendTo(filepath.Join(root, f.rel), b.String()); err != nil {
			return added, err
		}
		added += int64(b.Len())
	}
	return added, nil
}

// lastDay is the date that a log file's last line begins with.
func lastDay(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	buf := make([]byte, min(fi.Size(), 4096))
	if _, err := f.ReadAt(buf, fi.Size()-int64(len(buf))); err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	last := lines[len(lines)-1]
	if len(last) < 10 {
		return "", fmt.Errorf("%s: no date on its last line", path.Base(p))
	}
	return last[:10], nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
