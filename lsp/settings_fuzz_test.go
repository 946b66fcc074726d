package lsp

import (
	"testing"
)

// FuzzParseSettings: whatever the section holds, parseSettings does not
// panic and leaves only values the server can use.
func FuzzParseSettings(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `[]`, `"x"`,
		`{"agent":"alice","episode":"episode-2","conversation":"c","scope":"episode","topK":7}`,
		`{"topK":"7","masking":"everything","maxDiagnosticsPerFile":-3}`,
		`{"interpreter":{"rules":[{"match":"^(?P<text>.*)$","reading":"said"}]}}`,
		`{"interpreter":"rules.json"}`, `{"interpreter":5}`, `{"interpreter":{"rules":[{"match":"(","reading":"said"}]}}`,
		`{"episode":"episode--1","agent":"..","scope":"all","topK":100000}`,
		`{"trace":{"server":"verbose"},"server":{"path":""}}`,
	} {
		f.Add([]byte(seed))
	}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, raw []byte) {
		prev := defaultSettings()
		st, _ := parseSettings(raw, prev, root)
		if st.Masking != MaskingOff && st.Masking != MaskingHidingOutside {
			t.Errorf("masking %q", st.Masking)
		}
		if st.TopK < 0 || (st.MaxDiagnosticsPerFile != nil && *st.MaxDiagnosticsPerFile < 0) {
			t.Errorf("topK %d, maxDiagnosticsPerFile %v", st.TopK, st.MaxDiagnosticsPerFile)
		}
		if err := st.request().Validate(); err != nil {
			t.Errorf("settings give a request the engine refuses: %v", err)
		}
		if (st.interpreter == nil) != (st.interpreterSource == "") {
			t.Errorf("interpreter %v loaded from %q", st.interpreter, st.interpreterSource)
		}
	})
}
