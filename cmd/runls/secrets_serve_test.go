package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

// TestServeLogHoldsNoSecret runs `runls serve` (in-process) with its log in a
// file, searches with a secret in the query over evidence holding another, and
// reads the log file: at info no secret is in it, and with masking on none is
// even at debug. The lsp package's TestSecretsNeverLogged covers more request
// shapes; this one covers the log as the command writes it.
func TestServeLogHoldsNoSecret(t *testing.T) {
	const evidence, query = "AKIAEVIDENCE0SECRET1", "AKIAQUERY00SECRET222"
	for _, tt := range []struct {
		level, masking string
	}{{"info", "off"}, {"debug", "hidingOutside"}} {
		t.Run(tt.level+"/"+tt.masking, func(t *testing.T) {
			run := copySample(t)
			note := filepath.Join(run, "episode-1", "alice", "keys.txt")
			if err := os.WriteFile(note, []byte("the deploy key is "+evidence+" in the vault\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			logFile := filepath.Join(t.TempDir(), "runls.log")
			conn, _, code, _ := session(t, []string{"--log-file", logFile, "--log-level", tt.level})
			ctx := context.Background()
			if _, err := conn.Call(ctx, protocol.MethodInitialize, map[string]any{
				"processId": nil, "rootUri": "file://" + run, "capabilities": map[string]any{},
				"initializationOptions": map[string]any{"runls": map[string]any{"masking": tt.masking}},
			}, nil); err != nil {
				t.Fatal(err)
			}
			_ = conn.Notify(ctx, protocol.MethodInitialized, map[string]any{})
			var answers []string
			for _, params := range []map[string]any{
				{"query": "deploy key " + query, "topK": 20},
				{"query": evidence, "topK": 20},
				{"query": "deploy", "episode": "episode-" + query},
			} {
				var res struct {
					Items []struct {
						Text string `json:"text"`
					} `json:"items"`
				}
				if _, err := conn.Call(ctx, "run/search", params, &res); err != nil {
					answers = append(answers, err.Error())
				}
				for _, it := range res.Items {
					answers = append(answers, it.Text)
				}
			}
			var syms []json.RawMessage
			if _, err := conn.Call(ctx, protocol.MethodWorkspaceSymbol, map[string]any{"query": "vault " + query}, &syms); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Call(ctx, protocol.MethodShutdown, nil, nil); err != nil {
				t.Fatal(err)
			}
			_ = conn.Notify(ctx, protocol.MethodExit, nil)
			if got := waitCode(t, code); got != 0 {
				t.Errorf("exit code %d, want 0", got)
			}

			all := strings.Join(answers, "\n")
			if masked := tt.masking != "off"; masked == strings.Contains(all, evidence) {
				t.Errorf("masking %s: the answers hold the secret: %v, want %v:\n%s", tt.masking, !masked, masked, all)
			}
			log, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(log, []byte("indexed")) {
				t.Fatalf("the log file lacks the indexed line, so it was not captured:\n%s", log)
			}
			if tt.level == "debug" && !bytes.Contains(log, []byte("run/search")) {
				t.Fatalf("the debug log lacks the run/search lines:\n%s", log)
			}
			for _, s := range []string{evidence, query} {
				if bytes.Contains(log, []byte(s)) {
					t.Errorf("the log at %s with masking %s holds %s:\n%s", tt.level, tt.masking, s, log)
				}
			}
		})
	}
}
