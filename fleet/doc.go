// Package fleet ships runs to a shared store and searches them there with
// the index's rules and ranking (spec §16): many runs, many machines, one
// scorer. The store is behind an interface (Store: ship, statistics,
// candidates); VictoriaLogs, spoken to over its HTTP API with the standard
// library, is the one implementation (VictoriaLogs).
//
// # Entries and statistics
//
// The index ranks pieces (spec §4: lines of evidence text, cut at 2000
// UTF-16 units) with statistics over every indexed piece of the agents
// searched (§6). The store holds one entry per record (§16), so an entry
// carries what its pieces need:
//
//   - `pieces`, its number of pieces, and `tokens`, its number of terms
//     (the sum of its pieces' |d|): N = sum(pieces) and avgdl =
//     sum(tokens)/sum(pieces) over the entries searched, exactly the
//     index's;
//   - `terms`, its distinct terms (runls' terms, lower-cased, one space
//     apart): the store's word filter on it finds the records that hold a
//     term by runls' tokenizer, not the store's (VictoriaLogs keeps `_`
//     inside words; runls splits there);
//   - `loc`, each piece's place: its bytes in `_msg` and its line, byte
//     and UTF-16 range in the file as written (masking changes lengths, so
//     the ranges cannot be made from `_msg`).
//
// n(t), the pieces that hold t, is not a count of records: a record of
// several lines may hold t in several pieces. Every piece that holds a
// query term belongs to a record whose `terms` holds it, so when the
// candidates (the records of the agents searched that hold any query term,
// before the request's filters) are fetched whole, n(t) is counted from
// their pieces and the ranking equals the folder's to the last bit. When
// they pass the bound, n(t) is the store's count of records holding t (a
// record with t in several pieces counts once), the best-bounded set is
// ranked (records holding the rarest terms first, with the request's rules
// as the store's filters) and a notice says so.
//
// Fields of an entry: `_msg` the record's evidence text, masked unless
// --no-mask (for told and said records, the message); `_time` its time
// (UTC, as written; a note: its file's modification time); stream fields
// `run`, `episode`, `agent`; `episode_n` the episode's number; `form`
// (`record` for a record file's records, `note` for notes); `unfielded`;
// `conversation`, `state`, `level`, `time_text` (as written), `reading`,
// `path`, `line` (1-based), `offset`, `record_id` (a hash of the run, the
// file's path and identity, and the offset of the record's first line
// shipped), `tokens`, `pieces`, `terms`, `loc`. Left-out records and
// records without terms (never indexed, never returned) are not sent.
//
// # Shipping again
//
// The offsets shipped are kept beside the cache entry (the cache folder's
// fleet/ folder, one file a run and store). A batch is recorded as in
// flight before it is sent and as shipped after the store took it; a
// shipper killed between the two asks the store which records of the
// batch it holds (after the store's searchable delay) and sends the rest.
// At the end the store's counts are checked (count_uniq(record_id) of the
// run against what was shipped): records the store dropped (retention,
// -retentionPeriod, 7 days by default; times more than two days ahead)
// are an error, not a silent loss.
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
