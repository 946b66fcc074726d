// Package fleet ships runs to a shared store and searches them there with
// the index's rules and ranking (spec §16): many runs, many machines, one
// scorer. The store is behind an interface (Store: ship, statistics,
// candidates); VictoriaLogs, spoken to over its HTTP API with the standard
// library, is the one implementation (VictoriaLogs).
//
// # Entries, tallies and statistics
//
// The index ranks pieces (spec §4: lines of evidence text, cut at 2000
// UTF-16 units) with statistics over every indexed piece of the agents
// searched (§6). The store holds one entry per record (§16); an entry
// carries what its pieces need:
//
//   - `tokens`, its number of terms (the sum of its pieces' |d|);
//   - `terms`, those of its distinct terms (runls' terms, lower-cased, one
//     space apart) that the store's word filter cannot find in `_msg`
//     (VictoriaLogs' words keep `_` inside and their case: "Deploy" and
//     "deploy_db" do not hold the word "deploy"), so that a record holds a
//     term t when `_msg` holds the word t or `terms` does;
//   - `loc`, each piece's place: its bytes in `_msg` and its line, byte
//     and UTF-16 range in the file as written (masking changes lengths, so
//     the ranges cannot be made from `_msg`).
//
// Beside the records, each batch shipped leaves its tally (tally.go): rows
// of kind "stats" (records, pieces and terms by agent, episode and
// conversation) and "dict" (by agent, the pieces holding each term, spread
// over 64 fields by the term's hash). A search's statistics read them, not
// the records: N = sum(pieces), avgdl = sum(tokens)/N and n(t) (pieces,
// not records: a stack trace holds `at` on every line) exactly the index's,
// in two queries of a few thousand rows, where counting the records read
// millions.
//
// When the candidates (the records of the scope holding any query term,
// before the request's filters) are within the bound, they are fetched
// whole and n(t) is also counted from their pieces: the ranking equals the
// folder's to the last bit. Past the bound, the records holding the
// rarest terms (with the request's rules as the store's filters) are
// ranked with the tallies' n(t), and a notice says so.
//
// Fields of an entry: `_msg` the record's evidence text, masked unless
// --no-mask (for told and said records, the message); `_time` its time
// (UTC, as written; a note: its file's modification time); stream fields
// `run`, `episode`, `agent`; `episode_n` the episode's number; `form`
// (`record` for a record file's records, `note` for notes); `unfielded`;
// `conversation`, `state`, `level`, `time_text` (as written), `reading`,
// `path`, `line` (1-based), `offset`, `record_id` (a hash of the run, the
// file's path and identity, and the offset of the record's first line
// shipped), `tokens`, `terms`, `loc`. Left-out records and records
// without terms (never indexed, never returned) are not sent. The tallies'
// rows are sent after their batch's records, with one stream field, `kind`
// (their run, agent and episode are plain fields: one stream a kind keeps
// them in a few blocks); queries of records ask for the streams without a
// kind.
//
// # Shipping again
//
// The offsets shipped are kept beside the cache entry (the cache folder's
// fleet/ folder, one file a run and store). A batch is recorded as in
// flight before it is sent and as shipped after the store took it; a
// shipper killed between the two asks the store which records of the
// batch it holds (after the store's searchable delay) and sends the rest.
// At the end the store's counts are checked (count_uniq(record_id) of the
// run against what was shipped, and the records its tallies count against
// the records it holds): records the store dropped (retention,
// -retentionPeriod, 7 days by default; times more than two days ahead)
// are an error, not a silent loss. A batch's tally is its last lines, the
// very last marked `end`: a shipper killed mid-batch asks whether the
// store holds it, and if not, counts the batch's records the store holds
// into the next tally.
//
// A record that grows after it was shipped (a record file's last record
// gaining lines) ships its new lines as an entry of their own, masked and
// interpreted with the whole record; a last line without a line end is
// shipped by a one-shot ship, and not by --follow until its line end.
//
// # Partial answers
//
// Every query asks with allow_partial_response=0, so that a store with a
// storage node down answers an error, never silently less. With
// --partial the query is asked again allowing a partial answer, and the
// result carries a notice (field `fleet`) naming the cause.
//
// # Known differences from a search of the folder
//
//   - The turn message's told records are recognised by their masked text
//     (the folder compares the unmasked message).
//   - An agent or conversation the store holds no shipped record of (only
//     DEBUG records, only binary files) gets a notice; an episode folder
//     with nothing shipped is unknown to the store.
package fleet
