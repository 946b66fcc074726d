package lsp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"runls/lsp"
	"runls/retriever"
)

// startLogged is start with the server's log going to logger.
func startLogged(t *testing.T, logger *zap.Logger) *client {
	t.Helper()
	return start(t, startOpts{logger: logger, pollInterval: 50 * time.Millisecond})
}

// Secrets of the evidence and of the requests. Each is a credential the
// masker hides (an AWS access key id), so with masking on it may not be
// logged even at debug level.
const (
	evidenceSecret = "AKIAEVIDENCE0SECRET1"
	querySecret    = "AKIAQUERY00SECRET222"
	turnSecret     = "AKIATURN000SECRET333"
	symbolSecret   = "AKIASYMBOL0SECRET444"
	fieldSecret    = "AKIAFIELD00SECRET555"
)

// secretRun writes a run whose records and notes hold evidenceSecret, with
// a line of the current episode without the conversation field (so the
// engine warns about that file while a search runs).
func secretRun(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "run")
	files := map[string]string{
		"episode-1/alice/alice.history": "2026-10-21 18:00:00 [running] [conv-1] Alice deploy uses key " + evidenceSecret + " for the bucket\n" +
			"2026-10-21 18:00:01 [running] [conv-1] Alice was told: rotate " + evidenceSecret + " after the deploy\n" +
			"  continuation holding " + evidenceSecret + " too\n",
		"episode-1/alice/alice.log": "2026-10-21 18:00:02 WARN  [running] [-] Alice deploy failed with " + evidenceSecret + "\n" +
			"2026-10-21 18:00:03 INFO  [running] Alice unfielded deploy line with " + evidenceSecret + "\n",
		"episode-1/bob/notes.txt": "deploy notes: aws key " + evidenceSecret + " lives in the vault\n",
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestSecretsNeverLogged runs searches whose queries, turn messages and
// fields hold secrets, over evidence that holds one, through the server with
// its log captured at info and at debug, with masking off and on. Spec §9 and
// issue 8: no evidence text or request query is logged above debug level, and
// with masking on nothing the masker would hide is logged at all.
func TestSecretsNeverLogged(t *testing.T) {
	secrets := []string{evidenceSecret, querySecret, turnSecret, symbolSecret, fieldSecret}
	tests := []struct {
		level   zapcore.Level
		masking string
		// mayLog: at debug with masking off, the request's own text may be
		// logged (the spec bounds only the levels above debug).
		mayLog bool
	}{
		{zapcore.InfoLevel, "off", false},
		{zapcore.InfoLevel, "hidingOutside", false},
		{zapcore.DebugLevel, "hidingOutside", false},
		{zapcore.DebugLevel, "off", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.level, tt.masking), func(t *testing.T) {
			root := secretRun(t)
			core, logs := observer.New(tt.level)
			c := startLogged(t, zap.New(core))
			c.initialize(root, false, map[string]any{"masking": tt.masking})
			c.waitIndexed()

			var found []string
			search := func(params map[string]any) {
				t.Helper()
				var res retriever.Result
				if err := c.call(lsp.MethodRunSearch, params, &res); err != nil {
					found = append(found, "error: "+err.Error())
					return
				}
				for _, it := range res.Items {
					found = append(found, it.Text)
				}
			}
			search(map[string]any{"query": "deploy " + querySecret, "episode": "episode-1", "conversation": "conv-1", "topK": 50})
			search(map[string]any{"query": "deploy " + evidenceSecret, "topK": 50})
			search(map[string]any{"turnMessage": "rotate " + turnSecret, "episode": "episode-2", "conversation": "conv-1"})
			// Rejected requests: the error names the value (to the client), the log must not.
			search(map[string]any{"query": "deploy", "agent": fieldSecret + "/x"})
			search(map[string]any{"query": "deploy", "episode": "episode-" + fieldSecret})
			search(map[string]any{"query": "deploy", "scope": fieldSecret})
			search(map[string]any{"query": []string{fieldSecret}})
			var syms []protocol.SymbolInformation
			c.mustCall(protocol.MethodWorkspaceSymbol, map[string]any{"query": "deploy " + symbolSecret}, &syms)
			for _, s := range syms {
				found = append(found, s.Name)
			}
			// A rejected setting's value never reaches the log either
			// (TestRejectedSettingsNotLogged); these settings are good.
			c.notify(protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"runls": map[string]any{
				"masking": tt.masking, "episode": "episode-1", "conversation": "conv-1", "topK": 7}}})
			search(map[string]any{"query": "deploy"})
			if err := c.shutdownExit(); err != nil {
				t.Errorf("Serve = %v", err)
			}

			// The searches did carry the evidence through the server, and
			// masking hid it from the answers when on.
			all := strings.Join(found, "\n")
			if tt.masking == "off" && !strings.Contains(all, evidenceSecret) {
				t.Errorf("no answer holds the evidence's secret, so this test proves nothing:\n%s", all)
			}
			if tt.masking != "off" {
				if strings.Contains(all, evidenceSecret) {
					t.Errorf("masking on, an answer holds the secret:\n%s", all)
				}
				if !strings.Contains(all, "<secret>") {
					t.Errorf("masking on, no answer shows <secret>:\n%s", all)
				}
			}

			entries := logs.All()
			if len(entries) == 0 {
				t.Fatal("nothing was logged: the log was not captured")
			}
			leaked := 0
			for _, e := range entries {
				line := entryText(e)
				for _, s := range secrets {
					if strings.Contains(line, s) {
						leaked++
						if tt.mayLog {
							t.Logf("debug level, masking off: %s logged (allowed): %s", s, line)
						} else {
							t.Errorf("%s logged at %s: %s", s, e.Level, line)
						}
					}
				}
			}
			t.Logf("%d log entries, %d with a secret", len(entries), leaked)
		})
	}
}

// entryText is everything a log entry holds, as an encoder would write it.
func entryText(e observer.LoggedEntry) string {
	b, err := json.Marshal(e.ContextMap())
	if err != nil {
		b = []byte(fmt.Sprint(e.ContextMap()))
	}
	return fmt.Sprintf("%s %s %s %s", e.Level, e.LoggerName, e.Message, b)
}

// TestRejectedSettingsNotLogged: a setting the server refuses is logged with
// its name and why, never with its value (a value can hold a secret: a token
// pasted into the wrong field, a path). Every kind of refusal is tried, in
// initializationOptions and in didChangeConfiguration; the user is still told
// (window/showMessage), and no log entry above debug holds any value.
func TestRejectedSettingsNotLogged(t *testing.T) {
	const (
		secret    = "AKIASETTING0SECRET66"
		secretNum = 987654321
	)
	values := []string{secret, fmt.Sprint(secretNum), fmt.Sprint(-secretNum)}
	changes := []map[string]any{
		{"agent": secret + "/x", "episode": "episode-" + secret, "scope": secret, "topK": secretNum,
			"masking": secret, "maxDiagnosticsPerFile": -secretNum, "interpreter": "/nonexistent/" + secret + ".json"},
		{"topK": -secretNum, "interpreter": map[string]any{"rules": []any{map[string]any{"match": "[" + secret, "reading": "note"}}}},
		{"interpreter": map[string]any{"rules": []any{map[string]any{"match": "x", "reading": secret}}}},
		{"interpreter": secret + "/rules.json", "conversation": []string{secret}},
		{"interpreter": []string{secret}, "agent": 5},
	}
	core, logs := observer.New(zapcore.DebugLevel)
	c := startLogged(t, zap.New(core))
	c.initialize(secretRun(t), false, changes[0])
	c.waitFor("the refusal of the initial settings", method(protocol.MethodWindowShowMessage))
	for i, ch := range changes[1:] {
		mark := c.mark()
		c.notify(protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"runls": ch}})
		c.waitForAfter(mark, fmt.Sprintf("the refusal of change %d", i+1), method(protocol.MethodWindowShowMessage))
	}
	mark := c.mark()
	c.notify(protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"runls": secret}})
	c.waitForAfter(mark, "the refusal of a section that is no object", method(protocol.MethodWindowShowMessage))
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}

	refused := 0
	for _, e := range logs.All() {
		line := entryText(e)
		if strings.Contains(line, "refused") {
			refused++
		}
		if e.Level <= zapcore.DebugLevel {
			continue
		}
		for _, v := range values {
			if strings.Contains(line, v) {
				t.Errorf("a setting's value %s logged at %s: %s", v, e.Level, line)
			}
		}
	}
	// agent, episode, scope, topK, masking, maxDiagnosticsPerFile and the
	// interpreter at least, before the later changes.
	if refused < 7 {
		t.Errorf("%d refusals logged, want at least 7 (the test proves nothing otherwise)", refused)
	}
	shown := ""
	for _, n := range c.sent(method(protocol.MethodWindowShowMessage)) {
		shown += string(n.params) + "\n"
	}
	for _, name := range []string{"runls.agent", "runls.topK", "runls.masking", "runls.interpreter", "runls.maxDiagnosticsPerFile"} {
		if !strings.Contains(shown, name) {
			t.Errorf("the user was not told of %s:\n%s", name, shown)
		}
	}
}
