package retriever

import (
	"context"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"runls/recordformat"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/runfs"
)

// items reads the text of the hits from their files (the index keeps no copy
// of it) and makes the result items. A piece whose text no longer matches
// what was indexed (the file changed after the update) is left out and logged:
// a search never returns stale evidence. The lines are read one after the
// other into one reused buffer (readLine).
//
// Every hit's columns and tables are read first (itemHead), then the lines
// (itemText): a hit's lookups are a few cache lines each, cold by the time
// a server answers, and made one hit after the other, with no read of a file
// between them, the processor fetches them together (issue 33). Before
// them, one short pass touches what each hit's head and line read first
// (touchItems): between two hits' reads, itemHead's checks, allocations and
// formatting left too many instructions for the processor to overlap them.
func (ix *Index) items(hits []hit, agents []string) Result {
	out := Result{Items: make([]Item, len(hits)), Notices: []Notice{}}
	keepTouched(touchItems(hits))
	var small [16]pieceSpot
	var smallNames [16]*fileName
	spots, names := small[:0], smallNames[:0]
	// The files' names first, in a loop of their own: each a lookup of a
	// few dependent cold lines, which the processor overlaps from one hit
	// to the next when nothing else comes between them.
	for _, h := range hits {
		names = append(names, ix.rb.fileName(h.fs.Rel))
	}
	for i, h := range hits {
		spots = append(spots, ix.itemHead(h, agents[i], names[i], &out.Items[i]))
	}
	kept := 0
	ix.rb.withScratch(func(sc *lineScratch) {
		for i, h := range hits {
			if ix.itemText(h, spots[i], &out.Items[i], &sc.buf) {
				out.Items[kept] = out.Items[i]
				kept++
			}
		}
	})
	clear(out.Items[kept:]) // no dropped item keeps its strings
	out.Items = out.Items[:kept]
	return out
}

// touchItems reads, unchecked, every hit's values of its segment's
// columns, its record table's entries where TimeAndLevel starts, and its
// line index's entry, in one pass of a few loads a hit that depend on no
// other hit's, and returns them folded into one value (keepTouched). The
// reads are a search's, under its guard: a fault on a cut mapping is
// caught as itemHead's would be, and a corrupt value is only a hint (what
// the items answer is read again, checked).
func touchItems(hits []hit) uint32 {
	var v uint32
	for _, h := range hits {
		line, rest := h.seg.Touch(h.doc)
		v ^= rest ^ h.fs.Records().Touch(line)
		if l, k := h.fs.Lines(), int(line/lineIndexEvery); k < len(l) {
			v ^= uint32(l[k])
		}
	}
	return v
}

// keepTouched takes touchItems' value, so that its loads are made: a
// value no one used would let the compiler drop them.
//
//go:noinline
func keepTouched(uint32) {}

// pieceSpot is where a hit's piece is: its line, its byte offset and length
// there (or in the line's prose, FlagProse), and its flags.
type pieceSpot struct {
	line, off, n uint32
	flags        uint8
}

// itemHead fills what a hit's item holds besides its text and range, from
// the index alone and names (its file's, fileName), and returns where its
// piece is.
func (ix *Index) itemHead(h hit, agent string, names *fileName, item *Item) pieceSpot {
	s, d, fs := h.seg, h.doc, h.fs
	p := pieceSpot{line: s.LineOf(d), off: s.StartOf(d), n: s.BlenOf(d), flags: s.FlagsOf(d)}
	*item = Item{
		Location: Location{URI: names.uri},
		Score:    h.score,
		Agent:    agent,
		Episode:  fs.Episode(),
		Reading:  readingOfFlag[p.flags&corpus.FlagReadingMask],
		Path:     names.path,
		File:     fs.Rel,
	}
	if c := s.ConvOf(d); c != 0 {
		name := ix.state.Convs.Name(c)
		item.Conversation = &name
	}
	item.Time, item.Level = fs.Records().TimeAndLevel(p.line)
	return p
}

// itemText reads the line of hit h's piece, at p, into *buf and fills the
// item's text and range; false when the piece's text is not what was
// indexed.
func (ix *Index) itemText(h hit, p pieceSpot, item *Item, buf *[]byte) bool {
	s, d, fs := h.seg, h.doc, h.fs
	lineText, start, end, raw, err := ix.rb.pieceSource(fs, p, buf)
	if err != nil {
		ix.log.Debug("left out a piece whose file changed", zap.String("file", fs.Rel), zap.Error(err))
		return false
	}
	text, masked := s.Masked.Get(d)
	if !masked {
		text = recordformat.ValidText(raw)
		if corpus.PieceKeyString(ix.state.Seed, text) != s.Key(d) {
			ix.log.Debug("left out a piece whose file changed", zap.String("file", fs.Rel))
			return false
		}
	}
	startChar := recordformat.UTF16Len(lineText[:start])
	item.Location.Range = Range{
		Start: Position{Line: int(p.line), Character: startChar},
		End:   Position{Line: int(p.line), Character: startChar + recordformat.UTF16Len(lineText[start:end])},
	}
	item.Text, item.ByteStart, item.ByteEnd = text, start, end
	if p.flags&corpus.FlagProse != 0 && !fs.Form.IsRecord() {
		item.Time, item.Level = jsonTimeAndLevel(lineText)
	}
	return true
}

// fileNames keeps the absolute path and the URI of the files a search's
// items were in, made once a file, not once an item (issue 33): they
// depend only on the run folder, which an index keeps for its life, and the
// file's path in it. It is bounded, emptied when full.
type fileNames struct {
	m sync.Map // Rel -> *fileName
	n atomic.Int32
}

// fileName is a file's absolute path and its URI (FileURI).
type fileName struct{ path, uri string }

// maxFileNames bounds the files fileNames keeps: at 100,000 files it keeps
// a few, not every one a search ever answered from.
const maxFileNames = 4096

// fileName returns the path and URI of file rel of the run folder, from
// rb.names: the one run folder its names are made in is rb's own.
func (rb *readBack) fileName(rel string) *fileName { return rb.names.of(rb.root, rel) }

// of returns the path and URI of file rel of the run folder root, kept by
// rel alone: every call gives the same root (readBack.fileName).
func (c *fileNames) of(root, rel string) *fileName {
	if v, ok := c.m.Load(rel); ok {
		return v.(*fileName)
	}
	path := runfs.Abs(root, rel)
	n := &fileName{path: path, uri: FileURI(path)}
	if c.n.Add(1) > maxFileNames {
		c.m.Clear()
		c.n.Store(1)
	}
	c.m.Store(rel, n)
	return n
}

// Info tells what the run holds (spec §9 run/info).
func (ix *Index) Info(ctx context.Context) (Info, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	info := Info{Root: FileURI(ix.root), Agents: []string{}, Episodes: []EpisodeInfo{}}
	type epAcc struct {
		agents map[string]bool
		convs  map[uint32]bool
	}
	eps := map[string]*epAcc{}
	for name := range ix.state.Episodes {
		eps[name] = &epAcc{agents: map[string]bool{}, convs: map[uint32]bool{}}
	}
	agents := map[string]bool{}
	for _, fs := range ix.state.Files {
		e := eps[fs.Episode()]
		if e == nil {
			e = &epAcc{agents: map[string]bool{}, convs: map[uint32]bool{}}
			eps[fs.Episode()] = e
		}
		name := ix.state.Agents[fs.Agent]
		e.agents[name] = true
		agents[name] = true
		for _, c := range fs.Convs() {
			e.convs[c] = true
		}
		if fs.Indexed() {
			info.Indexing.Files++
			info.Indexing.Bytes += fs.ReadPos
		}
	}
	info.Agents = sortedKeys(agents)
	for name, e := range eps {
		ei := EpisodeInfo{Episode: name, Agents: sortedKeys(e.agents), Conversations: []string{}}
		for c := range e.convs {
			ei.Conversations = append(ei.Conversations, ix.state.Convs.Name(c))
		}
		slices.Sort(ei.Conversations)
		info.Episodes = append(info.Episodes, ei)
	}
	slices.SortFunc(info.Episodes, func(a, b EpisodeInfo) int {
		na, _ := EpisodeNumber(a.Episode)
		nb, _ := EpisodeNumber(b.Episode)
		if c := corpus.CompareEpisodeNumbers(na, nb); c != 0 {
			return c
		}
		return strings.Compare(a.Episode, b.Episode)
	})
	info.Indexing.Done = ix.indexed.Load()
	return info, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// RecordFiles lists the absolute paths of the run's record files in
// location order (spec §3: episode number, then path relative to the run
// folder, byte-wise).
func (ix *Index) RecordFiles() []string {
	ix.mu.RLock()
	var files []*corpus.File
	for _, fs := range ix.state.Files {
		if fs.Form.IsRecord() {
			files = append(files, fs)
		}
	}
	ix.mu.RUnlock()
	slices.SortFunc(files, func(a, b *corpus.File) int {
		if c := corpus.CompareEpisodeNumbers(a.EpNum(), b.EpNum()); c != 0 {
			return c
		}
		return strings.Compare(a.Rel, b.Rel)
	})
	out := make([]string, len(files))
	for i, fs := range files {
		out[i] = runfs.Abs(ix.root, fs.Rel)
	}
	return out
}

// FileURI writes a file URI the way VS Code writes it: every byte of the
// path percent-encoded but for letters, digits, "-._~" and "!'()*" (which
// encodeURIComponent keeps) and "/", so that ":" and "@" are encoded too and
// editors match the URI to their open documents.
func FileURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path
	}
	const hex = "0123456789ABCDEF"
	var out strings.Builder // its String is the bytes written, not a copy of them
	out.Grow(len("file://") + len(p) + 16)
	out.WriteString("file://")
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/!'()*", c) >= 0 {
			out.WriteByte(c)
		} else {
			out.WriteByte('%')
			out.WriteByte(hex[c>>4])
			out.WriteByte(hex[c&15])
		}
	}
	return out.String()
}

// PathOfURI returns the file path of a file URI, or "" when it is not one.
func PathOfURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}
