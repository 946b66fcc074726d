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

// Ship sends entries as JSON lines; the store's answer is checked, and the
// content type set (without it VictoriaLogs answers 200 and stores nothing).
func (v *VictoriaLogs) Ship(ctx context.Context, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	for i := range entries {
		if err := enc.Encode(wireOf(&entries[i])); err != nil {
			return fmt.Errorf("ship: encode: %w", err)
		}
	}
	u := v.base + "/insert/jsonline?_stream_fields=run,episode,agent&_time_field=_time&_msg_field=_msg"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, &body)
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

// Statistics asks for the statistics and facts of a search. A term's
// count is a query of its own, the term a filter before the pipe: there the
// store skips the blocks its bloom filters rule out (a rare word over 5 M
// records: 0.2 s), where a stats condition reads every value (4.7 s). The
// queries run side by side, at most statsParallel at once.
func (v *VictoriaLogs) Statistics(ctx context.Context, q StatsQuery) (Stats, error) {
	agent := ""
	if q.Scope.Agent != "" {
		agent = "agent:=" + quote(q.Scope.Agent)
	}
	runs := runsFilter(q.Scope.Runs)
	scope := strings.Join(nonEmpty([]string{runs, agent}), " ")
	var out Stats
	out.DF = make([]int64, len(q.Terms))
	// Each query and what its answer's first row gives; the facts of the
	// notices are asked as "is there one" (limit 1), which stops at the
	// first record found.
	type ask struct {
		query string
		take  func(r map[string]string, rows int)
	}
	asks := []ask{{scope + " | stats sum(pieces) n, sum(tokens) tok", func(r map[string]string, _ int) {
		out.Pieces, out.Tokens = number(r["n"]), number(r["tok"])
	}}}
	exists := func(filter string, to *bool) {
		asks = append(asks, ask{runs + " " + filter + " | limit 1 | fields run", func(_ map[string]string, rows int) { *to = rows > 0 }})
	}
	if q.Agent != "" {
		exists("agent:="+quote(q.Agent), &out.HasAgent)
	}
	if n, ok := retriever.EpisodeNumber(q.Episode); ok {
		exists("episode_n:="+quote(n), &out.HasEpisode)
		if q.Conversation != "" {
			exists("episode_n:="+quote(n)+" conversation:="+quote(q.Conversation), &out.HasConversation)
		}
	}
	if len(q.Terms) > 0 {
		asks = append(asks, ask{scope + " " + anyTerm(q.Terms) + " | stats count() m, count()" + ifOf(rulesFilter(q.Rules)) + " me", func(r map[string]string, _ int) {
			out.Candidates, out.Evidence = number(r["m"]), number(r["me"])
		}})
		for i, t := range q.Terms {
			asks = append(asks, ask{scope + " terms:" + quote(t) + " | stats count() d", func(r map[string]string, _ int) {
				out.DF[i] = number(r["d"])
			}})
		}
	}
	partials := make([]string, len(asks))
	errs := make([]error, len(asks))
	sem := make(chan struct{}, statsParallel)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, a := range asks {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rows, p, err := v.query(ctx, a.query)
			partials[i], errs[i] = p, err
			if err != nil {
				return
			}
			var first map[string]string
			if len(rows) > 0 {
				first = rows[0]
			}
			mu.Lock()
			a.take(first, len(rows))
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := cmp.Or(errs...); err != nil {
		return Stats{}, err // the first: the others likely say the same
	}
	for _, p := range partials {
		out.Partial = cmp.Or(out.Partial, p)
	}
	return out, nil
}

// statsParallel bounds the queries of one search's statistics at once.
const statsParallel = 8

// Candidates fetches the records a search ranks.
func (v *VictoriaLogs) Candidates(ctx context.Context, q CandidateQuery) ([]Entry, string, error) {
	parts := []string{runsFilter(q.Scope.Runs)}
	if q.Scope.Agent != "" {
		parts = append(parts, "agent:="+quote(q.Scope.Agent))
	}
	parts = append(parts, anyTerm(q.Terms))
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

// Held counts the entries and distinct record ids of each run.
func (v *VictoriaLogs) Held(ctx context.Context, runs []string) (map[string]Held, error) {
	rows, _, err := v.query(ctx, runsFilter(runs)+" | stats by (run) count() n, count_uniq(record_id) u")
	if err != nil {
		return nil, err
	}
	out := map[string]Held{}
	for _, r := range rows {
		out[r["run"]] = Held{Records: number(r["n"]), Unique: number(r["u"])}
	}
	return out, nil
}

// RecordIDs lists the record ids held of a run's file from offset on.
func (v *VictoriaLogs) RecordIDs(ctx context.Context, run, path string, offset int64) (map[string]bool, error) {
	rows, _, err := v.query(ctx, fmt.Sprintf("%s path:=%s offset:>=%d | fields record_id", runsFilter([]string{run}), quote(path), offset))
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
	rows, _, err := v.query(ctx, runsFilter([]string{run})+" | uniq by (path)")
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
	rows, _, err := v.query(ctx, runsFilter(runs)+" | uniq by (agent)")
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
