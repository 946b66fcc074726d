package retriever

// This file holds what the fleet ships of a run (spec §16): the shipped
// record's shape and the run's agent files as the index found them;
// shipread.go reads their records with the index's own rules, each record
// with the pieces a search ranks and their locations in the file as
// written, so that a store's copy of the run ranks as the folder does.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"runls/recordformat"
	"runls/retriever/internal/runfs"
)

// ShipFile is an agent file of the run, as the index found it.
type ShipFile struct {
	Path    string // slash-separated, relative to the run folder
	Episode string // the episode folder's name
	Agent   string
	// Records is true for a record file read in the logback forms: its
	// records follow rules 2-4 of spec §5. Other files hold notes (rule 5).
	Records  bool
	Dev, Ino uint64
	Size     int64
	ModTime  time.Time

	form recordformat.Form
}

// ShipPos is where a file's shipping stands: reading again from Offset
// gives every record not shipped yet its whole text (a record that grows,
// a key block still open in a plain file), and the first Skip lines from
// Offset were shipped already.
type ShipPos struct {
	Offset   int64  `json:"offset"`
	Line     uint32 `json:"line"`     // Offset's 0-based line
	InRecord bool   `json:"inRecord"` // a record started before Offset
	Skip     int    `json:"skip"`
	// Layout is 1 + a record file's layout once decided from its head
	// (spec §2 "Other layouts"), 0 before.
	Layout uint8 `json:"layout,omitempty"`
}

// ShipRecord is one record (or note) to ship: the lines of it not shipped
// before, masked as the index masks them.
type ShipRecord struct {
	Offset int64  // byte offset of its first line shipped now
	Line   uint32 // that line, 0-based
	// Text is the evidence text of those lines, masked, joined with "\n"
	// (for a told or said record, the message's part of them).
	Text         string
	Time         string // `<date> <time>` as written; "" without one
	Level        string // INFO, WARN, ERROR; "" without one
	State        string // the episode state; "" for notes
	Conversation *string
	Unfielded    bool
	// Foreign: a record of a record file in another layout, a note for the
	// rules (spec §2: its records are searched as notes).
	Foreign bool
	Reading Reading
	Terms   int // terms of its pieces (spec §6 |d|, summed)
	// Distinct are the distinct terms of its pieces, in first-seen order,
	// one space apart.
	Distinct string
	// PieceTerms, for a record of several pieces, are each piece's
	// distinct terms (one space apart), pieces a '\n' apart: what n(t)
	// counts.
	PieceTerms string
	Pieces     []ShipPiece
}

// ShipPiece is a piece of a shipped record (spec §4): its text within the
// record's Text and its place in the file's line as written.
type ShipPiece struct {
	Line               uint32 // 0-based
	TextStart, TextEnd int    // bytes of ShipRecord.Text
	ByteStart, ByteEnd int    // bytes of the line in the file
	CharStart, CharEnd int    // UTF-16 units of the line in the file
	Terms              int
}

// ShipFiles lists the run's agent files (spec §1: every regular file below
// an agent folder of an episode folder, no link followed, binary files left
// out), in location order. It reads no more of a file than its head: a ship
// needs no index, and a run is read once, by ReadShip.
func (ix *Index) ShipFiles(ctx context.Context) ([]ShipFile, error) {
	episodes, err := ix.shipDir(".")
	if err != nil {
		return nil, fmt.Errorf("ship: list the run folder: %w", err)
	}
	var out []ShipFile
	for _, ep := range episodes {
		if _, ok := EpisodeNumber(ep.Name()); !ok || !ep.IsDir() {
			continue
		}
		agents, err := ix.shipDir(ep.Name())
		if err != nil {
			continue // gone meanwhile, or unreadable: as the index, nothing of it
		}
		for _, ag := range agents {
			if !ag.IsDir() || !ValidAgent(ag.Name()) {
				continue
			}
			if err := ix.shipWalk(ctx, ep.Name(), ag.Name(), ep.Name()+"/"+ag.Name(), &out); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(out, func(a, b ShipFile) int {
		if c := CompareEpisodes(a.Episode, b.Episode); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out, nil
}

func (ix *Index) shipDir(rel string) ([]fs.DirEntry, error) {
	d, err := ix.fsys.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadDir(-1)
}

// shipWalk adds the files below folder rel of an agent (links skipped).
func (ix *Index) shipWalk(ctx context.Context, episode, agent, rel string, out *[]ShipFile) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := ix.shipDir(rel)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		path := rel + "/" + e.Name()
		switch {
		case e.Type()&fs.ModeSymlink != 0:
		case e.IsDir():
			if err := ix.shipWalk(ctx, episode, agent, path, out); err != nil {
				return err
			}
		case e.Type().IsRegular():
			f, ok := ix.shipFile(path)
			if ok {
				f.Episode, f.Agent = episode, agent
				*out = append(*out, f)
			}
		}
	}
	return nil
}

// shipFile stats a file and checks its head for a NUL (spec §1: binary).
func (ix *Index) shipFile(rel string) (ShipFile, bool) {
	file, err := ix.fsys.Open(filepath.FromSlash(rel))
	if err != nil {
		return ShipFile{}, false
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return ShipFile{}, false
	}
	head := make([]byte, min(info.Size(), BinarySniffBytes))
	if n, _ := io.ReadFull(file, head); bytes.IndexByte(head[:n], 0) >= 0 {
		return ShipFile{}, false
	}
	st := runfs.StatOf(info)
	form := recordformat.FormOf(rel)
	return ShipFile{Path: rel, Records: form.IsRecord(), Dev: st.Dev, Ino: st.Ino, Size: st.Size,
		ModTime: time.Unix(0, st.Mtime), form: form}, true
}
