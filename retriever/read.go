package retriever

// This file reads lines of an agent file for a client that names the file by
// its path (the MCP server's read tool), through the same confinement as the
// index's own reads: the folder opened at the start (os.Root), a non-blocking
// open, and the check that the kernel names the opened file at its own path.

import (
	"bufio"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"runls/masking"
	"runls/recordformat"
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

// maskContextLines is how many lines before the first line asked for are
// read too when masking is on, so that the masker sees the start of a key
// block (or record) that began before them: a PEM key is at most a few dozen
// lines of 64 characters.
const maskContextLines = 256

// ReadLines reads lines of an agent file of the run (spec §1 confines it: a
// path that is absolute, that has a ".." element, that is not an agent file
// the index lists, that is a link, or that became one, is refused with a
// *FieldError on "path", and nothing outside the run is opened). Text is
// UTF-8 with invalid bytes as U+FFFD, masked as the index masks evidence when
// masking is on. A First beyond the file's last line is a *FieldError on
// "startLine" that says how many lines the file has.
func (ix *Index) ReadLines(ctx context.Context, req ReadRequest) (Lines, error) {
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

	n := req.First - 1 // 0-based
	from := n
	if ix.masker != nil {
		from = max(0, n-maskContextLines)
	}
	off, at := lineStart(st.LineIndex, from)
	if off > 0 && !lineStartsAt(f, off) {
		off, at = 0, 0 // rewritten since it was indexed: count from the start
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, off, 1<<62), 64<<10)
	// A line is read up to readCap bytes: past the cut, a margin that lets
	// the masker see whole a secret that crosses the cut.
	readCap := 0
	if req.MaxLineBytes > 0 {
		readCap = req.MaxLineBytes + 4<<10
	}

	var texts []string // context lines, then the lines asked for
	var cut []bool
	size := 0
	out := Lines{File: rel, Agent: agent, Episode: st.Episode}
	for line := at; ; line++ {
		if line%1024 == 0 && ctx.Err() != nil {
			return Lines{}, ctx.Err()
		}
		if line >= n+req.Count {
			_, err := r.Peek(1)
			out.EOF = err != nil
			break
		}
		raw, long, err := readLineCapped(r, readCap)
		if err != nil && len(raw) == 0 && !long {
			if !errors.Is(err, io.EOF) {
				return Lines{}, err
			}
			out.EOF = true
			if line <= n {
				return Lines{}, &FieldError{"startLine", strconv.Itoa(req.First), "the file has " + strconv.Itoa(line) + " lines"}
			}
			break
		}
		if line < from {
			continue
		}
		text := recordformat.ValidText(raw)
		shown := len(text)
		if req.MaxLineBytes > 0 {
			shown = min(shown, req.MaxLineBytes)
		}
		if req.MaxBytes > 0 && line > n && size+shown > req.MaxBytes {
			out.Stopped = true
			break
		}
		texts = append(texts, text)
		cut = append(cut, long)
		if line >= n {
			size += shown
		}
	}

	if ix.masker != nil {
		texts = maskLines(ix.masker, texts)
	}
	for i, text := range texts[min(len(texts), n-from):] {
		c := cut[n-from+i]
		if req.MaxLineBytes > 0 && len(text) > req.MaxLineBytes {
			text, c = CutText(text, req.MaxLineBytes), true
		}
		out.Lines = append(out.Lines, Line{Number: req.First + i, Text: text, Cut: c})
	}
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

// lineStart returns the offset at which to read to reach 0-based line n,
// and the number of the line found there, from a file's sparse line index.
func lineStart(index []int64, n int) (int64, int) {
	k := min(n/lineIndexEvery, len(index)-1)
	if k < 0 {
		return 0, 0
	}
	return index[k], k * lineIndexEvery
}

// lineStartsAt reports whether a line starts at offset off of f.
func lineStartsAt(f io.ReaderAt, off int64) bool {
	var b [1]byte
	_, err := f.ReadAt(b[:], off-1)
	return err == nil && b[0] == '\n'
}

// readLineCapped reads one line without its line end ("\n" or "\r\n"),
// keeping at most limit bytes of it (0: all); long reports that the line
// is longer than that. At the end of the file it returns io.EOF, with the
// last line if that has no line end.
func readLineCapped(r *bufio.Reader, limit int) (line []byte, long bool, err error) {
	total := 0
	var last byte
	for {
		chunk, err := r.ReadSlice('\n')
		body := chunk
		ended := err == nil
		if ended {
			body = body[:len(body)-1]
		}
		if len(body) > 0 {
			last = body[len(body)-1]
		}
		total += len(body)
		keep := body
		if limit > 0 {
			keep = keep[:min(len(keep), max(0, limit+1-len(line)))] // one more, for a "\r" to drop
		}
		line = append(line, keep...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if ended && last == '\r' {
			total--
			line = line[:min(len(line), total)]
		}
		if limit > 0 && len(line) > limit {
			line = line[:limit]
		}
		if ended {
			err = nil
		}
		return line, limit > 0 && total > limit, err
	}
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
