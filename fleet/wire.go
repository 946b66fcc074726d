package fleet

// This file holds an entry as the store keeps it (the fields of spec §16
// and the ones ranking needs; see doc.go) and back: the pieces' places in
// `loc`, the distinct terms in `terms`.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"runls/retriever"
)

// wire is an entry as JSON for the store. Stream fields: run, episode, agent.
type wire struct {
	Msg          string  `json:"_msg"`
	Time         string  `json:"_time"`
	Run          string  `json:"run"`
	Episode      string  `json:"episode"`
	Agent        string  `json:"agent"`
	EpisodeN     string  `json:"episode_n"`
	Form         string  `json:"form"`
	Unfielded    string  `json:"unfielded,omitempty"`
	Conversation *string `json:"conversation,omitempty"`
	State        string  `json:"state,omitempty"`
	Level        string  `json:"level,omitempty"`
	TimeText     string  `json:"time_text,omitempty"`
	Reading      string  `json:"reading"`
	Path         string  `json:"path"`
	Line         uint32  `json:"line"`
	Offset       int64   `json:"offset"`
	RecordID     string  `json:"record_id"`
	Tokens       int     `json:"tokens"`
	Pieces       int     `json:"pieces"`
	Terms        string  `json:"terms"`
	Loc          string  `json:"loc"`
}

// entryFields are the fields a candidate is read back with.
const entryFields = "_msg, run, episode, agent, form, unfielded, conversation, state, level, time_text, reading, path, loc"

func wireOf(e *Entry) wire {
	w := wire{
		Msg: e.Text, Time: e.Time.UTC().Format(time.RFC3339Nano),
		Run: e.Run, Episode: e.Episode, Agent: e.Agent,
		Form: "note", Conversation: e.Conversation, State: e.State, Level: e.Level,
		TimeText: e.TimeText, Reading: string(e.Reading), Path: e.Path, Line: e.Line + 1,
		Offset: e.Offset, RecordID: e.RecordID, Tokens: e.Tokens, Pieces: len(e.Pieces),
	}
	w.EpisodeN, _ = retriever.EpisodeNumber(e.Episode)
	if e.RecordFile {
		w.Form = "record"
	}
	if e.Unfielded {
		w.Unfielded = "1"
	}
	seen := map[string]bool{}
	var terms, loc strings.Builder
	terms.WriteString(e.Terms)
	for i, p := range e.Pieces {
		if e.Terms == "" {
			tf, _ := retriever.PieceTerms(e.Text[p.TextStart:p.TextEnd])
			for t := range tf {
				if !seen[t] {
					seen[t] = true
					if terms.Len() > 0 {
						terms.WriteByte(' ')
					}
					terms.WriteString(t)
				}
			}
		}
		if i > 0 {
			loc.WriteByte(';')
		}
		var nb [64]byte
		b := nb[:0]
		for j, v := range [7]int{int(p.Line), p.TextStart, p.TextEnd, p.ByteStart, p.ByteEnd, p.CharStart, p.CharEnd} {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(v), 10)
		}
		loc.Write(b)
	}
	w.Terms, w.Loc = terms.String(), loc.String()
	return w
}

// entryOf reads a candidate back.
func entryOf(r map[string]string) (Entry, error) {
	e := Entry{
		Run: r["run"], Episode: r["episode"], Agent: r["agent"], Path: r["path"],
		RecordID: r["record_id"], TimeText: r["time_text"], Level: r["level"], State: r["state"],
		Reading: retriever.Reading(r["reading"]), RecordFile: r["form"] == "record",
		Unfielded: r["unfielded"] == "1", Text: r["_msg"],
	}
	if c, ok := r["conversation"]; ok && c != "" {
		e.Conversation = &c
	}
	if t, err := time.Parse(time.RFC3339Nano, r["_time"]); err == nil {
		e.Time = t
	}
	e.Offset = number(r["offset"])
	e.Tokens = int(number(r["tokens"]))
	if l := number(r["line"]); l > 0 {
		e.Line = uint32(l - 1)
	}
	if r["loc"] == "" {
		return e, nil
	}
	for _, s := range strings.Split(r["loc"], ";") {
		var v [7]int
		n := 0
		for f := range strings.SplitSeq(s, ",") {
			x, err := strconv.Atoi(f)
			if err != nil || n == 7 || x < 0 {
				n = -1
				break
			}
			v[n] = x
			n++
		}
		p := retriever.ShipPiece{Line: uint32(v[0]), TextStart: v[1], TextEnd: v[2], ByteStart: v[3], ByteEnd: v[4], CharStart: v[5], CharEnd: v[6]}
		if n != 7 || p.TextStart > p.TextEnd || p.TextEnd > len(e.Text) {
			return Entry{}, fmt.Errorf("fleet: record %s of run %s has a bad piece %q", e.RecordID, e.Run, s)
		}
		e.Pieces = append(e.Pieces, p)
	}
	return e, nil
}
