package corpus

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"runls/retriever/internal/bm25"
)

// State is the state an update commits and a search reads, under the
// retriever's index lock (Index.mu, which this package does not take): the
// files, the segments and their statistics, the agents, episodes and
// conversation ids, and what notices found in them; with the lookups a
// search and a commit make of it.
type State struct {
	Files    map[string]*File // by slash path relative to the root
	ByID     []*File          // by id; nil once removed
	Segments []*Segment
	Postings []*bm25.Segment // segments' engine parts, in order (SetSegments)
	Agents   []string
	AgentIDs map[string]uint32
	Stats    bm25.Stats      // by agent id as the partition
	Episodes map[string]bool // episode folder names, agents or not
	NextID   uint32
	Dict     *bm25.Dict    // the terms' global ids (its own lock)
	Seed     uint64        // of the pieces' text hashes (texthash.go)
	Convs    Convs         // conversation ids (their own lock)
	Commits  atomic.Uint64 // commits made (the fact memo's clock)
	facts    factMemo      // what notices found in the files, for the state committed
	keys     fileKeys      // what the filter and the tie order read of each file (filekeys.go)
}

// Forget drops every file and segment, as a new state: the next update
// reads the run afresh. Its agents, conversation ids and seed stay (ids
// given are never taken back). The caller holds the write lock.
func (c *State) Forget() {
	c.Commits.Add(1)
	c.Files, c.ByID, c.NextID = map[string]*File{}, nil, 0
	c.keys.reset()
	c.SetSegments(nil)
	c.Stats = bm25.Stats{}
	c.Stats.Grow(uint32(max(len(c.Agents), 1) - 1))
	c.Dict = bm25.NewDict()
	c.Episodes = map[string]bool{}
}

// File returns the committed state of a file id, or nil: the pieces of a
// read that was discarded (the file failed half-way) name a file that is not.
func (c *State) File(id uint32) *File {
	if int(id) < len(c.ByID) {
		return c.ByID[id]
	}
	return nil
}

// HasAgent reports whether a file of the run lies in an agent folder of
// that name. It stops at the first such file.
func (c *State) HasAgent(name string) bool {
	id, ok := c.AgentIDs[name]
	if !ok {
		return false
	}
	return c.facts.of(c.Commits.Load(), Fact{Kind: FactAgent, Name: name}, func() bool {
		for _, fs := range c.Files {
			if fs.Agent == id {
				return true
			}
		}
		return false
	})
}

// AgentInOtherCase returns the first, byte-wise, of the run's agents whose
// name differs from name only in case.
func (c *State) AgentInOtherCase(name string) (string, bool) {
	var found []string
	for _, a := range c.Agents {
		if a != name && strings.EqualFold(a, name) && c.HasAgent(a) {
			found = append(found, a)
		}
	}
	if len(found) == 0 {
		return "", false
	}
	return slices.Min(found), true
}

// HasEpisode reports whether the run has an episode folder of number num
// by the folder naming rule number gives (the retriever's EpisodeNumber:
// episode-07 is episode-7), which the committed state does not know.
func (c *State) HasEpisode(num string, number func(name string) (string, bool)) bool {
	for name := range c.Episodes {
		if n, _ := number(name); n == num {
			return true
		}
	}
	return false
}

// ConversationIn reports whether a record of episode num (any agent, any
// level) was written in conversation name. It stops at the first file that
// has one.
func (c *State) ConversationIn(name, num string) bool {
	id, ok := c.Convs.Lookup(name)
	if !ok {
		return false
	}
	return c.facts.of(c.Commits.Load(), Fact{Kind: FactConversation, Name: name, Episode: num}, func() bool {
		for _, fs := range c.Files {
			if fs.EpNum() == num {
				if _, found := slices.BinarySearch(fs.Convs(), id); found {
					return true
				}
			}
		}
		return false
	})
}

// factMemo keeps what HasAgent, ConversationIn and other Known questions found, for one committed
// state. Each looks at every file of the run until it finds one (at 100,000
// files, a conversation's search took some 0.2 ms of a rare word's 0.3), and
// its answer depends on the committed files alone: they change only in
// Commit, which counts in Commits under the write lock, and a committed
// File is never written. So an answer holds while Commits is the
// same, and the callers, holding the read lock, see no commit come.
type factMemo struct {
	mu      sync.Mutex
	commits uint64
	known   map[Fact]bool
}

// Fact is a question the fact memo keeps the answer of.
type Fact struct {
	Kind          FactKind
	Name, Episode string
}

// FactKind is what a Fact asks about.
type FactKind uint8

const (
	FactAgent FactKind = iota
	FactConversation
	FactUnfielded // the files of an episode were looked at for warnUnfielded
)

// maxFacts bounds the facts kept for one state (requests can name any
// number of agents and conversations).
const maxFacts = 1024

// of returns the fact's answer for the committed state, from find when it is
// not known yet. Under the index's read lock.
func (m *factMemo) of(commits uint64, f Fact, find func() bool) bool {
	m.mu.Lock()
	v, ok := m.known[f]
	ok = ok && m.commits == commits
	m.mu.Unlock()
	if ok {
		return v
	}
	v = find()
	m.mu.Lock()
	if m.commits != commits || len(m.known) >= maxFacts {
		m.commits, m.known = commits, map[Fact]bool{}
	}
	if m.known == nil {
		m.known = map[Fact]bool{}
	}
	m.known[f] = v
	m.mu.Unlock()
	return v
}

// Known returns the answer to f for the state committed, from find when it
// is not known yet: a question whose answer depends on the committed files
// alone. The caller holds the read lock.
func (c *State) Known(f Fact, find func() bool) bool {
	return c.facts.of(c.Commits.Load(), f, find)
}
