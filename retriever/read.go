package retriever

// This file holds ReadLines: lines of an agent file for a client that names
// the file by its path (the MCP server's read tool), through the same
// confinement as the index's own reads: the folder opened at the start
// (os.Root), a non-blocking open, and the check that the kernel names the
// opened file at its own path. The lines are read by the one line reader
// (readback.go's readFrom) and masked by the one masking (mask.go).

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"runls/masking"
	"runls/retriever/internal/runfs"
)

// ReadRequest asks for lines of an agent file.
type ReadRequest struct {
	// Path is the file's path relative to the run folder, "/"-separated.
	Path string
	// First is the 1-based number of the first line; Count how many lines.
	First, Count int
	// MaxLineBytes cuts each line's text to at most this many bytes (0: no cut).
	MaxLineBytes int
	// MaxBytes stops the read before a line that would bring the text
	// returned beyond this many bytes; the first line is always returned
	// (0: no bound).
	MaxBytes int
}

// Lines are lines of an agent file, as ReadLines returns them.
type Lines struct {
	File    string // slash path relative to the run folder
	Agent   string
	Episode string
	Lines   []Line
	// EOF reports that the file has no line after the last one returned.
	EOF bool
	// Stopped reports that MaxBytes ended the read before Count lines.
	Stopped bool
}

// Line is one line of a file, without its line end.
type Line struct {
	Number int // 1-based
	Text   string
	// Cut reports that the line is longer in the file than Text (MaxLineBytes).
	Cut bool
}

// ReadLines reads lines of an agent file of the run (spec §1 confines it: a
// path that is absolute, that has a ".." element, that is not an agent file
// the index lists, that is a link, or that became one, is refused with a
// *FieldError on "path", and nothing outside the run is opened). Text is
// UTF-8 with invalid bytes as U+FFFD, masked as the index masks evidence when
// masking is on. A First beyond the file's last line is a *FieldError on
// "startLine" that says how many lines the file has.
func (ix *Index) ReadLines(ctx context.Context, req ReadRequest) (Lines, error) {
	return viewed(ctx, ix, "reading lines", func() (Lines, error) { return ix.readLines(ctx, req) })
}

func (ix *Index) readLines(ctx context.Context, req ReadRequest) (Lines, error) {
	rel, err := agentPath(req.Path)
	if err != nil {
		return Lines{}, err
	}
	if req.First < 1 {
		return Lines{}, &FieldError{"startLine", strconv.Itoa(req.First), "want a line number from 1"}
	}
	if req.Count < 1 {
		return Lines{}, &FieldError{"endLine", strconv.Itoa(req.First + req.Count - 1), "want a line number from startLine"}
	}
	if _, err := ix.Refresh(ctx, nil); err != nil {
		return Lines{}, err
	}
	ix.mu.RLock()
	st := ix.state.Files[rel]
	var agent string
	if st != nil {
		agent = ix.state.Agents[st.Agent]
	}
	ix.mu.RUnlock()
	if st == nil {
		return Lines{}, whyNotAgentFile(ix.fsys, req.Path, rel)
	}
	if st.Binary {
		return Lines{}, &FieldError{"path", req.Path, "a binary file (a NUL byte in its first 8 KiB): it is not read"}
	}

	listed, err := ix.fsys.Lstat(rel)
	if err != nil || !listed.Mode().IsRegular() {
		return Lines{}, &FieldError{"path", req.Path, "no longer a regular file of the run"}
	}
	f, err := runfs.OpenFile(ix.fsys, rel)
	if err != nil {
		return Lines{}, &FieldError{"path", req.Path, "cannot be opened: " + errText(err)}
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil || !opened.Mode().IsRegular() || !runfs.AtPath(ix.root, ix.fsys, f, rel, runfs.StatOf(listed), opened) {
		return Lines{}, &FieldError{"path", req.Path, "replaced by a link or another file while it was opened; links are never followed"}
	}

	out, err := ix.rb.readFrom(ctx, f, st.Lines(), req)
	if err != nil {
		return Lines{}, err
	}
	out.File, out.Agent, out.Episode = rel, agent, st.Episode()
	return out, nil
}

// agentPath checks a client's path and returns it cleaned.
func agentPath(p string) (string, error) {
	bad := func(reason string) error { return &FieldError{"path", p, reason} }
	switch {
	case p == "":
		return "", bad("want a file's path relative to the run folder, such as episode-1/alice/alice.log")
	case strings.ContainsRune(p, 0):
		return "", bad("holds a NUL byte")
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || len(p) >= 2 && p[1] == ':':
		return "", bad("an absolute path: want a path relative to the run folder (nothing outside it is read)")
	case strings.Contains(p, `\`):
		return "", bad(`holds "\": want "/" between folders`)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return "", bad(`holds "..": nothing outside the run folder is read`)
		}
	}
	return path.Clean(p), nil
}

// whyNotAgentFile says why a clean relative path names no agent file the
// index holds.
func whyNotAgentFile(fsys *os.Root, p, rel string) error {
	bad := func(reason string) error { return &FieldError{"path", p, reason} }
	info, err := fsys.Lstat(rel)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return bad("no such file in the run")
	case err != nil:
		return bad("not a file of the run: " + errText(err))
	case info.Mode()&fs.ModeSymlink != 0:
		return bad("a symbolic link: links are never followed")
	case info.IsDir():
		return bad("a folder: want a file")
	case !info.Mode().IsRegular():
		return bad("not a regular file")
	}
	return bad("not an agent file: only files under episode-N/<agent>/ are read (a link on the way is never followed)")
}

// CutText cuts text to at most n bytes on a character boundary, and before
// a masking placeholder that the cut would split.
func CutText(text string, n int) string {
	if len(text) <= n {
		return text
	}
	for n > 0 && !isCharStart(text[n]) {
		n--
	}
	text = text[:n]
	if i := strings.LastIndexByte(text, '<'); i >= 0 {
		for _, ph := range []string{masking.PathPlaceholder, masking.SecretPlaceholder} {
			if rest := text[i:]; len(rest) < len(ph) && strings.HasPrefix(ph, rest) {
				return text[:i]
			}
		}
	}
	return text
}

func isCharStart(b byte) bool { return b&0xC0 != 0x80 }

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
