package lsp

// This file holds the run folder the server serves: found from the
// workspace folder the client opened (the run folder itself, a folder inside
// it, or a folder holding exactly one run, as gopls finds go.mod), and kept
// in the client's own naming, so that every location the server sends lies
// under the folder the client opened, also when that folder is reached
// through a symbolic link (the engine works on the real path).

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"runls/retriever"
)

// findRunFolder returns the run folder to serve for the workspace folder
// ws, in ws's naming (a link on the way is kept, not resolved), and how it
// was found: "" when ws is the run folder (or no run folder was found: ws
// is served as it is, and served once it becomes one), "inside" when ws is
// a folder inside the run (an episode or agent folder, or below), "above"
// when ws holds exactly one run folder.
func findRunFolder(ws string) (run, how string) {
	ws = filepath.Clean(ws)
	if hasEpisodeFolder(ws) {
		return ws, ""
	}
	// Up: the nearest folder named episode-N on the way to ws is an episode
	// folder; the folder that holds it is the run.
	for dir := ws; ; {
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		if _, ok := retriever.EpisodeNumber(filepath.Base(dir)); ok && hasEpisodeFolder(parent) {
			return parent, "inside"
		}
		dir = parent
	}
	// Down: a folder of runs with exactly one in it.
	entries, err := os.ReadDir(ws)
	if err != nil {
		return ws, ""
	}
	var runs []string
	for _, e := range entries {
		if e.IsDir() && hasEpisodeFolder(filepath.Join(ws, e.Name())) {
			runs = append(runs, filepath.Join(ws, e.Name()))
		}
	}
	if len(runs) == 1 {
		return runs[0], "above"
	}
	return ws, ""
}

// hasEpisodeFolder reports whether dir holds an episode-N folder (not a
// link to one: the engine never follows links below the run folder), as
// the engine's IsRunFolder does.
func hasEpisodeFolder(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, ok := retriever.EpisodeNumber(e.Name()); ok && e.IsDir() {
			return true
		}
	}
	return false
}

// clientRoot is an engine whose answers name the run folder as the client
// does: the engine's URIs are of real paths, and a run folder opened
// through a link has another. Paths given to the engine stay real
// (server.pathOf maps the client's to them).
type clientRoot struct {
	Engine
	realURI, clientURI string // each with a trailing slash
	client             string
}

// withClientRoot wraps eng when the client names its run folder otherwise
// than the engine's real path.
func withClientRoot(eng Engine, client string) Engine {
	client = filepath.Clean(client)
	if client == eng.Root() {
		return eng
	}
	return &clientRoot{Engine: eng, client: client,
		realURI: retriever.FileURI(eng.Root()) + "/", clientURI: retriever.FileURI(client) + "/"}
}

// uri maps a URI under the engine's root to the client's.
func (c *clientRoot) uri(u string) string {
	if rest, ok := strings.CutPrefix(u, c.realURI); ok {
		return c.clientURI + rest
	}
	return u
}

func (c *clientRoot) Search(ctx context.Context, req retriever.Request) (retriever.Result, error) {
	return c.items(c.Engine.Search(ctx, req))
}

// items maps the URIs of a result's items to the client's.
func (c *clientRoot) items(res retriever.Result, err error) (retriever.Result, error) {
	for i := range res.Items {
		res.Items[i].Location.URI = c.uri(res.Items[i].Location.URI)
	}
	return res, err
}

func (c *clientRoot) Symbols(ctx context.Context, query string, limit int) (retriever.Result, error) {
	res, err := c.Engine.Symbols(ctx, query, limit)
	for i := range res.Items {
		res.Items[i].Location.URI = c.uri(res.Items[i].Location.URI)
	}
	return res, err
}

func (c *clientRoot) Records(ctx context.Context, req retriever.RecordsRequest) (retriever.RecordsResult, error) {
	res, err := c.Engine.Records(ctx, req)
	for i := range res.Records {
		res.Records[i].Location.URI = c.uri(res.Records[i].Location.URI)
	}
	return res, err
}

// Failures maps a copy: the engine keeps its answer and shares it between
// requests, which run at once (its JSON is then written for each request).
func (c *clientRoot) Failures(ctx context.Context, req retriever.FailuresRequest) (retriever.FailuresResult, error) {
	res, err := c.Engine.Failures(ctx, req)
	if err != nil || res.Groups == nil {
		return res, err
	}
	groups := make([]retriever.FailureGroup, len(res.Groups))
	for i, g := range res.Groups {
		g.Records = slices.Clone(g.Records)
		for j := range g.Records {
			g.Records[j].URI = c.uri(g.Records[j].URI)
		}
		groups[i] = g
	}
	return retriever.FailuresResult{Groups: groups}, nil
}

func (c *clientRoot) Info(ctx context.Context) (retriever.Info, error) {
	info, err := c.Engine.Info(ctx)
	info.Root = strings.TrimSuffix(c.clientURI, "/")
	return info, err
}

// fileURI is the URI of an engine's (real) path as the client names it.
func (g *generation) fileURI(path string) string {
	u := retriever.FileURI(path)
	if c, ok := g.engine.(*clientRoot); ok {
		return c.uri(u)
	}
	return u
}
