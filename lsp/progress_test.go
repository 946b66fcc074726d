package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"runls/lsp"
)

func TestIndexingProgress(t *testing.T) {
	for _, clientTakesProgress := range []bool{true, false} {
		t.Run(map[bool]string{true: "client takes progress", false: "client does not"}[clientTakesProgress], func(t *testing.T) {
			fake := newFake()
			fake.refreshGate = make(chan struct{})
			c := start(t, startOpts{open: fake.opener(nil, nil)})
			c.initialize("/fake/run", clientTakesProgress, nil)

			// A search sent while indexing waits for it.
			errc := make(chan error, 1)
			go func() { errc <- c.call(lsp.MethodRunSearch, map[string]any{"query": "q"}, nil) }()
			if clientTakesProgress {
				c.waitFor("window/workDoneProgress/create", method(protocol.MethodWorkDoneProgressCreate))
			}
			select {
			case err := <-errc:
				t.Fatalf("run/search answered (%v) before indexing ended", err)
			default:
			}
			close(fake.refreshGate)
			if err := <-errc; err != nil {
				t.Fatalf("run/search: %v", err)
			}
			if !clientTakesProgress {
				if n := len(c.sent(func(n note) bool {
					return strings.HasPrefix(n.method, "$/progress") || n.method == protocol.MethodWorkDoneProgressCreate
				})); n != 0 {
					t.Errorf("%d progress messages to a client that takes none", n)
				}
				if err := c.shutdownExit(); err != nil {
					t.Errorf("Serve = %v", err)
				}
				return
			}
			c.waitFor("progress end", func(n note) bool {
				return n.method == protocol.MethodProgress && strings.Contains(string(n.params), `"end"`)
			})
			create := c.sent(method(protocol.MethodWorkDoneProgressCreate))[0]
			var cp struct {
				Token json.RawMessage `json:"token"`
			}
			_ = json.Unmarshal(create.params, &cp)
			var kinds []string
			var percents []int
			for _, n := range c.sent(method(protocol.MethodProgress)) {
				var p struct {
					Token json.RawMessage `json:"token"`
					Value struct {
						Kind       string `json:"kind"`
						Percentage *int   `json:"percentage"`
					} `json:"value"`
				}
				if err := json.Unmarshal(n.params, &p); err != nil {
					t.Fatal(err)
				}
				if string(p.Token) != string(cp.Token) {
					t.Errorf("progress token %s, created %s", p.Token, cp.Token)
				}
				kinds = append(kinds, p.Value.Kind)
				switch {
				case p.Value.Kind == "begin" && (p.Value.Percentage == nil || *p.Value.Percentage != 0):
					// LSP: without a percentage in begin, a client may ignore those of the reports.
					t.Errorf("begin %s, want percentage 0", n.params)
				case p.Value.Kind == "report" && p.Value.Percentage != nil:
					percents = append(percents, *p.Value.Percentage)
				}
			}
			if len(kinds) < 3 || kinds[0] != "begin" || kinds[len(kinds)-1] != "end" {
				t.Errorf("progress kinds %v, want begin, report..., end", kinds)
			}
			if len(percents) == 0 || percents[len(percents)-1] != 100 {
				t.Errorf("percentages %v, want them to reach 100", percents)
			}
			for i := 1; i < len(percents); i++ {
				if percents[i] <= percents[i-1] {
					t.Errorf("percentages %v do not grow", percents)
				}
			}
			if err := c.shutdownExit(); err != nil {
				t.Errorf("Serve = %v", err)
			}
		})
	}
}
