package masking

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zricethezav/gitleaks/v8/detect"
)

// TestVendorRulesMatchGitleaks is the differential test of gitleaks.go's fast
// path (keywords, anchored runs, windows) against gitleaks' own detect
// package, on every sample text: every secret gitleaks finds is hidden, and
// nothing is hidden where gitleaks finds nothing, but for the deviations
// gitleaks.go names (rules for some file names, applied to any text; a
// secret hidden to the end of its token; runls' own rules for private keys
// and Terraform passwords).
func TestVendorRulesMatchGitleaks(t *testing.T) {
	if RaceEnabled {
		t.Skip("minutes under the race detector: make test-go runs it without")
	}
	texts := sampleTexts(t)
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	vr, err := vendorRulesOnce()
	if err != nil {
		t.Fatal(err)
	}
	pathRules := map[string]bool{}
	for id, r := range d.Config.Rules {
		if r.Path != nil || skipVendorRules[id] {
			pathRules[id] = true
		}
	}
	var missed, extra int
	for _, s := range texts {
		spans := vr.find(s.text, nil)
		covered := func(a, b int) bool {
			for _, sp := range spans {
				if sp.Start <= a && b <= sp.End {
					return true
				}
			}
			return false
		}
		var found [][2]int
		for _, f := range d.DetectString(s.text) {
			if pathRules[f.RuleID] {
				continue
			}
			for from := 0; ; {
				k := strings.Index(s.text[from:], f.Secret)
				if k < 0 {
					break
				}
				found = append(found, [2]int{from + k, from + k + len(f.Secret)})
				from += k + 1
			}
			ok := false
			for _, at := range found {
				ok = ok || covered(at[0], at[1])
			}
			if !ok {
				missed++
				t.Errorf("%s: gitleaks' %s finds %q in %q; runls hides %v", s.id, f.RuleID, f.Secret, s.text, spans)
			}
		}
		if pathRules[s.rule] {
			continue
		}
		for _, sp := range spans {
			ok := false
			for _, at := range found {
				ok = ok || sp.Start < at[1] && at[0] < sp.End
			}
			if !ok {
				extra++
				t.Errorf("%s: runls hides %q of %q, which gitleaks does not find", s.id, s.text[sp.Start:sp.End], s.text)
			}
		}
	}
	t.Logf("%d sample texts: %d secrets of gitleaks not hidden, %d spans gitleaks does not find", len(texts), missed, extra)
}

type sampleText struct{ id, rule, text string }

// sampleTexts reads the texts of the secret samples (see samples_test.go), or skips.
func sampleTexts(t *testing.T) []sampleText {
	t.Helper()
	data, err := os.ReadFile(SamplesPath(t))
	if err != nil {
		t.Skipf("the secret samples cannot be read: %v", err)
	}
	var doc struct {
		Samples []struct{ ID, Rule, Text string }
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out := make([]sampleText, len(doc.Samples))
	for i, s := range doc.Samples {
		out[i] = sampleText{s.ID, s.Rule, s.Text}
	}
	return out
}

// SamplesPath returns the path of the secret samples, or skips the test
// saying why. They are in the team's shared folder beside the repository
// (shared/data/secret-samples.json, in a folder above the package), or where
// RUNLS_SECRET_SAMPLES says, and are never copied into the repository (their
// licences and provenance are in the file). Exported for samples_test.go.
func SamplesPath(tb testing.TB) string {
	tb.Helper()
	if path := os.Getenv("RUNLS_SECRET_SAMPLES"); path != "" {
		return path
	}
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if p := filepath.Join(dir, "shared", "data", "secret-samples.json"); fileExists(p) {
			return p
		}
		if filepath.Dir(dir) == dir {
			tb.Skipf("the secret samples are not here: no shared/data/secret-samples.json in a folder above %s (set RUNLS_SECRET_SAMPLES to the file)", wd)
		}
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
