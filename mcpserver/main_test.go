package mcpserver_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: each
// session's server, transport pump and indexing end with it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
