package fleet

// This file holds a batch's tally: what a search's statistics need of the
// records shipped (N, avgdl, each term's n(t), which agents, episodes and
// conversations hold records), summed as they are shipped and kept in the
// store beside them, so that a search reads a few thousand tallies, not
// millions of records.

import (
	"hash/fnv"
	"strconv"
	"time"

	"runls/retriever"
)

// Tally sums the entries of a batch.
type Tally struct {
	// Groups are the batch's records by agent, episode and conversation.
	Groups map[TallyKey]*TallyCounts
	// Terms are, by agent, the pieces holding each term (n(t)).
	Terms map[string]map[string]int64
}

// TallyKey is a group of a tally.
type TallyKey struct {
	Agent, Episode string
	Conversation   string
	InConversation bool // Conversation is set (records of a fielded form)
}

// TallyCounts are a group's records, pieces and terms.
type TallyCounts struct {
	Records, Pieces, Tokens int64
}

// Add counts e.
func (t *Tally) Add(e *Entry) {
	if t.Groups == nil {
		t.Groups, t.Terms = map[TallyKey]*TallyCounts{}, map[string]map[string]int64{}
	}
	k := TallyKey{Agent: e.Agent, Episode: e.Episode}
	if e.Conversation != nil {
		k.Conversation, k.InConversation = *e.Conversation, true
	}
	g := t.Groups[k]
	if g == nil {
		g = &TallyCounts{}
		t.Groups[k] = g
	}
	g.Records++
	g.Pieces += int64(len(e.Pieces))
	g.Tokens += int64(e.Tokens)
	terms := t.Terms[e.Agent]
	if terms == nil {
		if len(t.Terms) > 16 {
			clear(t.Terms) // room kept for a few agents only
		}
		terms = map[string]int64{}
		t.Terms[e.Agent] = terms
	}
	list := e.Terms // one piece (most records): its distinct terms are the record's
	if len(e.Pieces) > 1 {
		list = e.PieceTerms
		if list == "" {
			// An entry made without them: counted from its pieces.
			for _, p := range e.Pieces {
				tf, _ := retriever.PieceTerms(e.Text[p.TextStart:p.TextEnd])
				for term := range tf {
					terms[term]++
				}
			}
			return
		}
	}
	start := 0
	for i := 0; i <= len(list); i++ {
		if i == len(list) || list[i] == ' ' || list[i] == '\n' {
			if i > start {
				terms[list[start:i]]++
			}
			start = i + 1
		}
	}
}

// Empty reports whether nothing was counted.
func (t *Tally) Empty() bool { return len(t.Groups) == 0 }

// Reset empties t, keeping its room: a run's next batch has much the same
// terms.
func (t *Tally) Reset() {
	clear(t.Groups)
	for _, terms := range t.Terms {
		clear(terms)
	}
}

// Records is the number of records counted.
func (t *Tally) Records() int64 {
	var n int64
	for _, g := range t.Groups {
		n += g.Records
	}
	return n
}

// termBuckets is how many fields a tally's terms are spread over: a search
// reads the one field its term hashes to (a few kB a tally, where the whole
// of a run's terms is some 150 kB).
const termBuckets = 64

// dictRowBytes bounds a row of terms (VictoriaLogs drops lines over
// -insert.maxLineSizeBytes, 256 kB by default).
const dictRowBytes = 64 << 10

// termBucket is the field a term's count is in.
func termBucket(term string) string {
	h := fnv.New32a()
	h.Write([]byte(term))
	return bucketName(int(h.Sum32() % termBuckets))
}

func bucketName(b int) string {
	const hex = "0123456789abcdef"
	return string([]byte{'d', hex[b>>4], hex[b&0xf]})
}

// appendTally appends the tally's rows as JSON lines: for each agent, rows
// of kind "dict" holding its terms' counts (field dNN: " term:count ..."
// with a space before and after each), then for each group a row of kind
// "stats" with its counts; the stats rows last, so that the store holding
// one means it read the whole batch, and the last marked "end". Stream
// field: kind alone (a search reads every tally of a kind: one stream
// holds them in a few blocks).
func appendTally(b []byte, run, batch string, t *Tally, now time.Time) []byte {
	stamp := now.UTC().Format(time.RFC3339Nano)
	head := func(b []byte, kind string) []byte {
		b = append(b, `{"_msg":"`...)
		b = append(b, kind...)
		b = append(b, `","_time":"`...)
		b = append(b, stamp...)
		b = append(b, '"')
		b = appendField(b, "kind", kind)
		b = appendField(b, "run", run)
		return appendField(b, "batch", batch)
	}
	for agent, terms := range t.Terms {
		if len(terms) == 0 {
			continue
		}
		var buckets [termBuckets][]byte
		for term, n := range terms {
			h := fnv.New32a()
			h.Write([]byte(term))
			k := h.Sum32() % termBuckets
			if buckets[k] == nil {
				buckets[k] = append(buckets[k], ' ')
			}
			buckets[k] = append(buckets[k], term...)
			buckets[k] = append(buckets[k], ':')
			buckets[k] = strconv.AppendInt(buckets[k], n, 10)
			buckets[k] = append(buckets[k], ' ')
		}
		rowStart := len(b)
		open := false
		for k, v := range buckets {
			for len(v) > 0 {
				part := v
				if len(part) > dictRowBytes {
					// A bucket too big for a row is cut after a term.
					cut := dictRowBytes
					for part[cut-1] != ' ' {
						cut--
					}
					part = v[:cut]
				}
				v = v[len(part):]
				if len(v) > 0 && v[0] != ' ' {
					v = append([]byte{' '}, v...)
				}
				if open && len(b)-rowStart+len(part) > dictRowBytes {
					b = append(b, "}\n"...)
					open = false
				}
				if !open {
					rowStart = len(b)
					b = head(b, "dict")
					b = appendField(b, "agent", agent)
					open = true
				}
				b = appendField(b, bucketName(k), string(part))
			}
		}
		if open {
			b = append(b, "}\n"...)
		}
	}
	n := 0
	for k, g := range t.Groups {
		n++
		b = head(b, "stats")
		b = appendField(b, "agent", k.Agent)
		b = appendField(b, "episode", k.Episode)
		if n, ok := retriever.EpisodeNumber(k.Episode); ok {
			b = appendField(b, "episode_n", n)
		}
		if k.InConversation {
			b = appendField(b, "conversation", k.Conversation)
		}
		b = appendInt(b, "records", g.Records)
		b = appendInt(b, "pieces", g.Pieces)
		b = appendInt(b, "tokens", g.Tokens)
		if n == len(t.Groups) {
			b = appendField(b, "end", "1") // the batch's last line
		}
		b = append(b, "}\n"...)
	}
	return b
}
