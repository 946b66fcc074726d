package fleet

// This file holds the Store of VictoriaLogs (cluster or single node), over
// its HTTP API: JSON lines in (/insert/jsonline), LogsQL out
// (/select/logsql/query), numbers answered as strings.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"runls/retriever"
)

// VictoriaLogs is a Store on a VictoriaLogs front (vlinsert + vlselect, or
// a single node) at a base URL.
type VictoriaLogs struct {
	base   string
	client *http.Client
	// AllowPartial asks again, allowing a partial answer, when the store
	// refuses one because a storage node is down; the answer says so.
	AllowPartial bool
	// Trace, when set, is told each query with its time and rows (a tool
	// for measuring: runls search --fleet sets it from RUNLS_FLEET_TRACE).
	Trace   io.Writer
	traceMu sync.Mutex
}

// NewVictoriaLogs returns the store at base (http://host:port).
func NewVictoriaLogs(base string) (*VictoriaLogs, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &retriever.FieldError{Field: "fleet", Value: base, Reason: "want the store's URL, http://host:port"}
	}
	return &VictoriaLogs{base: strings.TrimRight(base, "/"), client: &http.Client{Timeout: 5 * time.Minute}}, nil
}

// UnreachableError says the store could not be reached at all.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("the fleet store at %s cannot be reached: %v", e.URL, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// StoreError is an answer of the store that is not a result.
type StoreError struct {
	URL    string
	Status int
	Body   string
}

func (e *StoreError) Error() string {
	msg := fmt.Sprintf("the fleet store at %s answered %d: %s", e.URL, e.Status, e.Body)
	if e.storageDown() {
		msg += " (a storage node is down: the store can answer for part of its data only; --partial accepts that)"
	}
	return msg
}

// storageDown reports whether the store refused to answer because a storage
// node cannot be reached.
func (e *StoreError) storageDown() bool {
	b := strings.ToLower(e.Body)
	return e.Status >= 500 && (strings.Contains(b, "storage node") || strings.Contains(b, "vlstorage"))
}

// Ship sends a batch as JSON lines, then its tally; the store's answers
// are checked, and the content type set (without it VictoriaLogs answers
// 200 and stores nothing).
func (v *VictoriaLogs) Ship(ctx context.Context, b Batch) error {
	if len(b.Entries) == 0 && b.Tally == nil {
		return nil
	}
	size := 0
	for i := range b.Entries {
		size += 2*len(b.Entries[i].Text) + 400
	}
	body := make([]byte, 0, size)
	var enc lineEncoder
	for i := range b.Entries {
		body = enc.appendEntry(body, &b.Entries[i])
	}
	if err := v.insert(ctx, "run,episode,agent", body); err != nil {
		return err
	}
	if b.Tally == nil {
		return nil
	}
	// The tally after the records, its rows in one stream a kind.
	return v.insert(ctx, "kind", appendTally(body[:0], b.Run, b.ID, b.Tally, time.Now()))
}

// insert posts JSON lines with the stream fields named.
func (v *VictoriaLogs) insert(ctx context.Context, streamFields string, body []byte) error {
	if len(body) == 0 {
		return nil
	}
	u := v.base + "/insert/jsonline?_stream_fields=" + streamFields + "&_time_field=_time&_msg_field=_msg"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("ship: %w", err)
	}
	req.Header.Set("Content-Type", "application/stream+json")
	resp, err := v.client.Do(req)
	if err != nil {
		return &UnreachableError{URL: v.base, Err: err}
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode/100 != 2 {
		return &StoreError{URL: v.base, Status: resp.StatusCode, Body: strings.TrimSpace(string(msg))}
	}
	return nil
}

// Tallied reports whether the store holds the last line of a batch.
func (v *VictoriaLogs) Tallied(ctx context.Context, run, id string) (bool, error) {
	rows, _, err := v.query(ctx, tallyRows("stats", []string{run}, "")+" batch:="+quote(id)+" end:=1 | limit 1 | fields batch")
	return len(rows) > 0, err
}

// Flush makes what the store took searchable now (the front's
// /internal/force_flush: it sends what it holds to the storage nodes and
// has them make it searchable), where it otherwise takes a second or two.
func (v *VictoriaLogs) Flush(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.base+"/internal/force_flush", nil)
	if err != nil {
		return err
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return &UnreachableError{URL: v.base, Err: err}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return &StoreError{URL: v.base, Status: resp.StatusCode, Body: "force_flush refused"}
	}
	return nil
}

// Statistics asks for the statistics and facts of a search of the
// tallies (a few rows a run and batch; no record is read), in two queries
// side by side: the stats rows (N, the terms in all, the agent, episode
// and conversation asked of), and the dict rows (each term's n(t), read
// from the field it hashes to, by run).
func (v *VictoriaLogs) Statistics(ctx context.Context, q StatsQuery) (Stats, error) {
	var out Stats
	out.DF = make([]int64, len(q.Terms))
	fields := []string{"sum(pieces)" + ifOf(agentIs(q.Scope.Agent)) + " n", "sum(tokens)" + ifOf(agentIs(q.Scope.Agent)) + " tok"}
	if q.Agent != "" {
		fields = append(fields, "count()"+ifOf(agentIs(q.Agent))+" ha")
	}
	n, hasEpisode := retriever.EpisodeNumber(q.Episode)
	if hasEpisode {
		fields = append(fields, "count() if (episode_n:="+quote(n)+") he")
		if q.Conversation != "" {
			fields = append(fields, "count() if (episode_n:="+quote(n)+" conversation:="+quote(q.Conversation)+") hc")
		}
	}
	statsQuery := tallyRows("stats", q.Scope.Runs, "") + " | stats " + strings.Join(fields, ", ")
	var dictQuery string
	if len(q.Terms) > 0 {
		var sb strings.Builder
		sb.WriteString(tallyRows("dict", q.Scope.Runs, q.Scope.Agent))
		sums := make([]string, len(q.Terms))
		for i, t := range q.Terms {
			fmt.Fprintf(&sb, " | extract %s from %s", quote(" "+t+":<c"+strconv.Itoa(i)+"> "), termBucket(t))
			sums[i] = fmt.Sprintf("sum(c%d) d%d", i, i)
		}
		held := make([]string, len(q.Terms))
		for i := range q.Terms {
			held[i] = fmt.Sprintf("d%d:>0", i)
		}
		// The runs holding a term only (a row a run holding none is noise
		// a fleet of many runs would pay for).
		sb.WriteString(" | stats by (run) " + strings.Join(sums, ", ") + " | filter " + strings.Join(held, " OR "))
		dictQuery = sb.String()
	}
	var statsRows, dictRows []map[string]string
	var statsPartial, dictPartial string
	var statsErr, dictErr error
	var wg sync.WaitGroup
	wg.Go(func() { statsRows, statsPartial, statsErr = v.query(ctx, statsQuery) })
	if dictQuery != "" {
		wg.Go(func() { dictRows, dictPartial, dictErr = v.query(ctx, dictQuery) })
	}
	wg.Wait()
	if err := cmp.Or(statsErr, dictErr); err != nil {
		return Stats{}, err
	}
	if len(statsRows) > 0 {
		r := statsRows[0]
		out.Pieces, out.Tokens = number(r["n"]), number(r["tok"])
		out.HasAgent, out.HasEpisode, out.HasConversation = number(r["ha"]) > 0, number(r["he"]) > 0, number(r["hc"]) > 0
	}
	if len(dictRows) > 0 {
		out.ByRun = make(map[string][]int64, len(dictRows))
	}
	for _, r := range dictRows {
		df := make([]int64, len(q.Terms))
		any := false
		for i := range q.Terms {
			df[i] = number(r["d"+strconv.Itoa(i)])
			out.DF[i] += df[i]
			any = any || df[i] > 0
		}
		if any {
			out.ByRun[r["run"]] = df
		}
	}
	out.Partial = cmp.Or(statsPartial, dictPartial)
	return out, nil
}

// Candidates fetches the records a search ranks.
func (v *VictoriaLogs) Candidates(ctx context.Context, q CandidateQuery) ([]Entry, string, error) {
	parts := []string{recordStreams(q.Scope.Runs, q.Scope.Agent), anyTerm(q.Terms)}
	if q.Filtered {
		parts = append(parts, rulesFilter(q.Rules))
	}
	if len(q.Without) > 0 {
		parts = append(parts, "NOT "+anyTerm(q.Without))
	}
	query := strings.Join(nonEmpty(parts), " ") + " | fields " + entryFields
	if q.Limit > 0 {
		query += " | limit " + strconv.Itoa(q.Limit)
	}
	rows, partial, err := v.query(ctx, query)
	if err != nil {
		return nil, "", err
	}
	out := make([]Entry, 0, len(rows))
	for _, r := range rows {
		e, err := entryOf(r)
		if err != nil {
			return nil, "", err
		}
		out = append(out, e)
	}
	return out, partial, nil
}

// Held counts the entries and distinct record ids of each run, and the
// records its tallies count.
func (v *VictoriaLogs) Held(ctx context.Context, runs []string) (map[string]Held, error) {
	var rows, tallies []map[string]string
	var err1, err2 error
	var wg sync.WaitGroup
	wg.Go(func() {
		rows, _, err1 = v.query(ctx, recordStreams(runs, "")+" | stats by (run) count() n, count_uniq(record_id) u")
	})
	wg.Go(func() {
		tallies, _, err2 = v.query(ctx, tallyRows("stats", runs, "")+" | stats by (run) sum(records) r")
	})
	wg.Wait()
	if err := cmp.Or(err1, err2); err != nil {
		return nil, err
	}
	out := map[string]Held{}
	for _, r := range rows {
		out[r["run"]] = Held{Records: number(r["n"]), Unique: number(r["u"])}
	}
	for _, r := range tallies {
		h := out[r["run"]]
		h.Tallied = number(r["r"])
		out[r["run"]] = h
	}
	return out, nil
}

// RecordIDs lists the record ids held of a run's file from offset on.
func (v *VictoriaLogs) RecordIDs(ctx context.Context, run, path string, offset int64) (map[string]bool, error) {
	rows, _, err := v.query(ctx, fmt.Sprintf("%s path:=%s offset:>=%d | fields record_id", recordStreams([]string{run}, ""), quote(path), offset))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, r := range rows {
		out[r["record_id"]] = true
	}
	return out, nil
}

// Paths lists the files of a run the store holds records of.
func (v *VictoriaLogs) Paths(ctx context.Context, run string) (map[string]bool, error) {
	rows, _, err := v.query(ctx, recordStreams([]string{run}, "")+" | uniq by (path)")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, r := range rows {
		out[r["path"]] = true
	}
	return out, nil
}

// Agents lists the agents of the runs.
func (v *VictoriaLogs) Agents(ctx context.Context, runs []string) ([]string, error) {
	rows, _, err := v.query(ctx, tallyRows("stats", runs, "")+" | uniq by (agent)")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rows {
		out = append(out, r["agent"])
	}
	return out, nil
}

// query runs a LogsQL query, refusing a partial answer; with AllowPartial,
// a refusal because a storage node is down is asked again allowing one,
// and its cause returned.
func (v *VictoriaLogs) query(ctx context.Context, q string) ([]map[string]string, string, error) {
	rows, err := v.queryOnce(ctx, q, false)
	var se *StoreError
	if err != nil && v.AllowPartial && errors.As(err, &se) && se.storageDown() {
		rows, err = v.queryOnce(ctx, q, true)
		return rows, se.Body, err
	}
	return rows, "", err
}

func (v *VictoriaLogs) queryOnce(ctx context.Context, q string, partial bool) ([]map[string]string, error) {
	if v.Trace != nil {
		start := time.Now()
		rows, err := v.queryAnswer(ctx, q, partial)
		v.traceMu.Lock()
		fmt.Fprintf(v.Trace, "runls: fleet query %.1f ms, %d rows: %s\n", float64(time.Since(start).Microseconds())/1e3, len(rows), q)
		v.traceMu.Unlock()
		return rows, err
	}
	return v.queryAnswer(ctx, q, partial)
}

func (v *VictoriaLogs) queryAnswer(ctx context.Context, q string, partial bool) ([]map[string]string, error) {
	form := url.Values{"query": {q}, "allow_partial_response": {strconv.FormatBool(partial)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.base+"/select/logsql/query", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("fleet query: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	// Uncompressed: on loopback or a LAN, the store's gzip costs more CPU
	// (both sides) than the bytes it saves.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, &UnreachableError{URL: v.base, Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return nil, &StoreError{URL: v.base, Status: resp.StatusCode, Body: strings.TrimSpace(string(msg))}
	}
	var rows []map[string]string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var row map[string]string
		if err := json.Unmarshal(line, &row); err != nil {
			return nil, fmt.Errorf("fleet query: a line of the answer: %w", err)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fleet query: reading the answer: %w", err)
	}
	return rows, nil
}

// number reads a number the store answered as a string ("" and NaN: 0).
func number(s string) int64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return int64(math.Round(f))
}
