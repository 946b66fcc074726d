//go:build tools

// This file pins the modules DEVELOPERS.md names for every part of runls, so that
// `go mod tidy` keeps the versions that are known to build together even before
// each part imports them.
package runls

import (
	_ "github.com/fsnotify/fsnotify"
	_ "go.lsp.dev/jsonrpc2"
	_ "go.lsp.dev/protocol"
	_ "go.lsp.dev/uri"
	_ "go.uber.org/goleak"
	_ "go.uber.org/zap"
)
