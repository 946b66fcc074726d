package lsp

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
	"go.uber.org/zap"
)

var errBadURI = errors.New("not a usable file URI")

// Initialize takes the run folder and the settings, and answers with the
// capabilities actually served.
func (h handlers) Initialize(ctx context.Context, params *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	s := h.s
	workspace, why := rootOf(params)
	root, how := workspace, ""
	if workspace != "" {
		root, how = findRunFolder(workspace)
	}
	s.mu.Lock()
	s.state = stateInitialized
	s.root, s.noRoot = root, why
	s.workspace, s.rootHow = workspace, how
	s.caps = capsOf(params.Capabilities)
	s.mu.Unlock()
	s.logger.Info("initialize", zap.String("root", root), zap.String("workspace", workspace), zap.String("noRoot", why))

	sec, ok, err := sectionOf(params.InitializationOptions)
	if err != nil {
		s.logger.Warn("initializationOptions", zap.Error(err))
	}
	if ok {
		s.applySettings(ctx, sec)
	}
	return &protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			TextDocumentSync: &protocol.TextDocumentSyncOptions{
				OpenClose: true,
				Change:    protocol.TextDocumentSyncKindNone,
			},
			WorkspaceSymbolProvider: &protocol.WorkspaceSymbolOptions{
				WorkDoneProgressOptions: protocol.WorkDoneProgressOptions{WorkDoneProgress: true},
			},
			DocumentSymbolProvider: &protocol.DocumentSymbolOptions{Label: "runls records"},
			FoldingRangeProvider:   true,
			HoverProvider:          true,
			Experimental: map[string]any{
				"runSearchProvider": true,
				"runInfoProvider":   true,
			},
		},
		ServerInfo: &protocol.ServerInfo{Name: "runls", Version: s.opts.Version},
	}, nil
}

// Initialized says which folder is served and starts indexing in the
// background.
func (h handlers) Initialized(ctx context.Context, params *protocol.InitializedParams) error {
	s := h.s
	s.mu.Lock()
	root, workspace, how := s.root, s.workspace, s.rootHow
	s.mu.Unlock()
	// A folder that is no run (yet) is said by startGeneration, with why.
	if root != "" && (how != "" || hasEpisodeFolder(root)) {
		msg := "runls: serving the run folder " + root
		switch how {
		case "inside":
			msg += " (the workspace folder " + workspace + " is inside it)"
		case "above":
			msg += " (the one run in the workspace folder " + workspace + ")"
		}
		s.goBackground(func() {
			if err := s.client.LogMessage(s.ctx, &protocol.LogMessageParams{Type: protocol.MessageTypeInfo, Message: msg}); err != nil {
				s.logger.Debug("window/logMessage", zap.Error(err))
			}
		})
	}
	s.ensureStarted()
	return nil
}

// Shutdown stops indexing and watching; only exit is accepted after it.
func (h handlers) Shutdown(ctx context.Context) error {
	s := h.s
	s.mu.Lock()
	s.state = stateShutdown
	g := s.gen
	s.gen = nil
	s.mu.Unlock()
	s.retire(g)
	return nil
}

// Exit ends the connection; Serve then returns.
func (h handlers) Exit(ctx context.Context) error {
	s := h.s
	s.mu.Lock()
	if !s.exited {
		s.exited = true
		close(s.exitCh)
	}
	s.mu.Unlock()
	s.logger.Info("exit")
	return s.conn.Close()
}

// SetTrace is accepted: the server's log level is set by --log-level.
func (h handlers) SetTrace(ctx context.Context, params *protocol.SetTraceParams) error { return nil }

// WorkDoneProgressCancel is accepted: indexing progress is not cancellable.
func (h handlers) WorkDoneProgressCancel(ctx context.Context, params *protocol.WorkDoneProgressCancelParams) error {
	return nil
}

// DidChangeConfiguration applies new settings without a restart.
func (h handlers) DidChangeConfiguration(ctx context.Context, params *protocol.DidChangeConfigurationParams) error {
	sec, ok, err := sectionOf(params.Settings)
	if err != nil {
		h.s.logger.Warn("workspace/didChangeConfiguration", zap.Error(err))
		return nil
	}
	if !ok {
		h.s.logger.Debug("workspace/didChangeConfiguration without a runls section")
		return nil
	}
	h.s.applySettings(ctx, sec)
	return nil
}

// rootOf is the run folder: rootUri, else the first workspace folder, else
// the deprecated rootPath. why says what is wrong when there is none.
func rootOf(params *protocol.InitializeParams) (root, why string) {
	u := string(params.RootURI)
	if u == "" && len(params.WorkspaceFolders) > 0 {
		u = params.WorkspaceFolders[0].URI
	}
	if u == "" {
		if params.RootPath != "" {
			return params.RootPath, ""
		}
		return "", "the editor gave no workspace folder"
	}
	path, err := filenameOf(uri.URI(u))
	if err != nil || !isFileURI(u) {
		return "", fmt.Sprintf("the workspace %s is not a local folder", u)
	}
	return path, ""
}

func isFileURI(u string) bool {
	return len(u) >= 7 && (u[:7] == "file://" || u[:7] == "FILE://")
}
