package masking

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode"
)

// logLines returns n realistic evidence lines of an agent run, with nothing to
// hide in them except what hidden makes (0: none), deterministic for a seed.
func logLines(n int, seed int64) []string {
	r := rand.New(rand.NewSource(seed))
	agents := []string{"Alice", "Bob", "Carol", "planner", "coder-2"}
	templates := []func() string{
		func() string {
			return fmt.Sprintf("%s said: I will look at the failing test in episode %d and report back on the %d errors.", agents[r.Intn(5)], r.Intn(9), r.Intn(50))
		},
		func() string {
			return fmt.Sprintf("%s was told: Please summarise the results of the last run, including the error counts and timings.", agents[r.Intn(5)])
		},
		func() string {
			return fmt.Sprintf(`{"tool":"read_file","args":{"path":"episode-%d/alice/notes.txt"},"usage":{"input_tokens":%d,"output_tokens":%d}}`, r.Intn(9), r.Intn(9000), r.Intn(900))
		},
		func() string {
			return fmt.Sprintf("at com.example.agent.Runner.step(Runner.java:%d)", r.Intn(400))
		},
		func() string {
			return fmt.Sprintf("%s chat started", agents[r.Intn(5)])
		},
		func() string {
			return fmt.Sprintf("fetched https://example.com/api/v1/items?page=%d in %d ms (status 200)", r.Intn(20), r.Intn(900))
		},
		func() string {
			return fmt.Sprintf("wrote /runs/r1/episode-%d/alice/out-%d.md (%d bytes)", r.Intn(9), r.Intn(99), r.Intn(99999))
		},
		func() string {
			return "diff --git a/src/main.go b/src/main.go; index 3f2a1c9..8be77d0 100644"
		},
		func() string {
			return fmt.Sprintf("Error: cannot find module './utils' imported from src/index.ts:%d:%d", r.Intn(99), r.Intn(40))
		},
		func() string {
			return fmt.Sprintf("request %x-%x finished: ok=%d failed=%d elapsed=%.2fs", r.Int63(), r.Int31(), r.Intn(99), r.Intn(3), r.Float64()*10)
		},
		func() string {
			return "The key insight is that the cache key depends on the user id, not on the session; I passed that on."
		},
		func() string {
			return fmt.Sprintf("commit %040x by %s: fix off-by-one in the pager (closes #%d)", r.Int63(), agents[r.Intn(5)], r.Intn(999))
		},
	}
	lines := make([]string, n)
	for i := range lines {
		lines[i] = templates[r.Intn(len(templates))]()
	}
	return lines
}

func corpusBytes(lines []string) int64 {
	var n int64
	for _, l := range lines {
		n += int64(len(l)) + 1
	}
	return n
}

// BenchmarkMask measures masking throughput on ordinary log text (no secrets),
// per record as the engine calls it and on 64 KiB stretches, beside the
// term-splitting baseline below: compare the ratios within one run.
func BenchmarkMask(b *testing.B) {
	lines := logLines(20000, 1)
	block := strings.Join(lines, "\n")
	var blocks []string
	for len(block) > 0 {
		n := min(64<<10, len(block))
		if k := strings.LastIndexByte(block[:n], '\n'); k > 0 && n < len(block) {
			n = k + 1
		}
		blocks = append(blocks, block[:n])
		block = block[n:]
	}
	maskers := []struct {
		name string
		m    Masker
	}{
		{"hidingOutside", HidingOutside("/runs/r1")},
		{"credentials", NewCredentialMasker()},
		{"paths", NewPathRedactor("/runs/r1")},
	}
	for _, mk := range maskers {
		b.Run(mk.name+"/records", func(b *testing.B) {
			b.SetBytes(corpusBytes(lines))
			for b.Loop() {
				for _, l := range lines {
					mk.m.Mask(l)
				}
			}
		})
		b.Run(mk.name+"/64KiB", func(b *testing.B) {
			b.SetBytes(corpusBytes(lines))
			for b.Loop() {
				for _, s := range blocks {
					mk.m.Mask(s)
				}
			}
		})
	}
	// The baseline: what indexing does at the least with each line (cut it into
	// lower-case terms, count them), for the masking/indexing ratio.
	b.Run("baseline-terms/records", func(b *testing.B) {
		b.SetBytes(corpusBytes(lines))
		counts := map[string]int{}
		var buf []rune
		for b.Loop() {
			for _, l := range lines {
				buf = buf[:0]
				for _, r := range l {
					if unicode.IsLetter(r) || unicode.IsDigit(r) {
						buf = append(buf, unicode.ToLower(r))
						continue
					}
					if len(buf) > 0 {
						counts[string(buf)]++
						buf = buf[:0]
					}
				}
				if len(buf) > 0 {
					counts[string(buf)]++
				}
			}
		}
	})
}

// BenchmarkMaskSecrets measures the worst case: one line in ten holds a secret.
func BenchmarkMaskSecrets(b *testing.B) {
	lines := logLines(5000, 2)
	secrets := []string{"GITHUB_TOKEN=" + ghp, "password: hunter2", "Authorization: Bearer " + jwt, "key " + awsID, "cat /home/bob/.ssh/config"}
	for i := 0; i < len(lines); i += 10 {
		lines[i] += " " + secrets[(i/10)%len(secrets)]
	}
	m := HidingOutside("/runs/r1")
	b.SetBytes(corpusBytes(lines))
	for b.Loop() {
		for _, l := range lines {
			m.Mask(l)
		}
	}
}

// BenchmarkMaskAdversarial checks that masking stays linear on text built to
// hit the rules as often as possible (256 KiB each): MB/s should stay within
// a small factor of ordinary text.
func BenchmarkMaskAdversarial(b *testing.B) {
	const size = 256 << 10
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	inputs := map[string]string{
		"assignments":    fill("password=x "),
		"operators":      fill("a=b:c "),
		"long-word-ops":  fill(strings.Repeat("k", 3000) + "=v "),
		"pem-begins":     fill("-----BEGIN RSA PRIVATE KEY-----\nabc\n"),
		"pem-blocks":     fill("-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n"),
		"token-prefixes": fill("ghp_ sk- xoxb- eyJ AKIA glpat- "),
		"slashes":        fill("/a "),
		"drive-paths":    fill(`C:\a b\c `),
		"urls":           fill("https://u:p@h/x "),
		"no-newlines":    fill("token: Ab1234567890 "),
	}
	m := HidingOutside("/runs/r1")
	for name, text := range inputs {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				m.Mask(text)
			}
		})
	}
}
