package mcpserver

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzVet: a line vet lets through is one the SDK decodes, since its reader
// ends the session at the first it cannot (a differential test against the
// SDK's own decoder); vet never panics.
func FuzzVet(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"x"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":5}`,
		`{"jsonrpc":"2.0","id":[],"method":"x"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
		`{"JSONRPC":"2.0","ID":1,"METHOD":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","method":5}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":2}}`,
		"garbage", "", "{}", "null", `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) == 0 {
			return // pump skips blank lines
		}
		_, refused := vet(line)
		if refused != nil {
			return
		}
		if _, err := jsonrpc.DecodeMessage(line); err != nil {
			t.Fatalf("vet let %q through, which the SDK cannot decode: %v", line, err)
		}
	})
}
