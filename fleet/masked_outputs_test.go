package fleet

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"runls/internal/secretrun"
)

// TestShipMaskedOutputs ships secretrun's run (issue 28's credential
// assignments in every context an agent run has) to a store in memory
// through the index runls ship opens (masking.HidingOutside, the masker of
// every other output path), with masking off and on, and reads every field
// of every entry sent: off, some show a value (so the test can fail); on,
// none shows any part of one (spec §8, §16: what runls ship sends).
func TestShipMaskedOutputs(t *testing.T) {
	for _, on := range []bool{false, true} {
		root := filepath.Join(t.TempDir(), "run")
		if err := secretrun.Write(root); err != nil {
			t.Fatal(err)
		}
		st := &memStore{}
		if _, err := Ship(context.Background(), st, openRun(t, root, on, ""), ShipOptions{Run: "secret"}); err != nil {
			t.Fatal(err)
		}
		if len(st.entries) < 5 {
			t.Fatalf("masking %v: %d entries shipped", on, len(st.entries))
		}
		sent, err := json.Marshal(st.entries)
		if err != nil {
			t.Fatal(err)
		}
		if msg := secretrun.Check("runls ship", on, true, string(sent)); msg != "" {
			t.Error(msg)
		}
	}
}
