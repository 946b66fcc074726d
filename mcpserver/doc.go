// Package mcpserver serves a run's evidence to AI agents over the Model
// Context Protocol (spec §14): the tools search, records, read and run_info,
// on the official Go SDK (github.com/modelcontextprotocol/go-sdk, whose
// package is named mcp), over the engine the language server and the command
// line use.
// It holds no search logic of its own.
//
// Choices where the spec is silent:
//
//   - Every tool is read-only and says so (readOnlyHint, idempotentHint; not
//     destructive; not open-world: it reads one run folder).
//   - Structured results have the shapes of run/search and run/info, with a
//     location as {"path", "line"} (the path relative to the run folder, the
//     line 1-based), and with a field that LSP sends as null (conversation,
//     time, level, a notice's suggestion) left out instead: no schema has a
//     type list such as ["null", "array"] or a field of any type, which some
//     clients reject; every list is [] when empty, never null. search's is
//     the whole run/search result of spec §9 and §12 (every item field,
//     matches among them, then hidden and notices), field by field as the
//     language server answers the same request (TestSearchIsRunSearch), plus
//     runls' own cut marks; its text ends with what the filters hid, each
//     count with the argument that would show it, and the notices, in words.
//   - records answers run/records (spec §13) with a location as {"path",
//     "line", "endLine"} (the record's first and last lines, 1-based, for
//     read), its fields that run/records sends as null left out, and the
//     cursor as it is (lowercase hex: no masking rule takes it for a secret,
//     so it survives the masking of the answer). Its text is one line per
//     record: `path:line: time level agent [conversation] text`, the text's
//     line ends written as \n. No interpreter rule applies (spec §13).
//   - Answers are bounded so that none comes near the 25,000 tokens clients
//     accept: search's topK is 1 to 50 (default 10), records' limit 1 to 500
//     (default 100), read gives at most 200 lines, and the texts of one answer
//     together hold at most MaxAnswerTextBytes. A search cuts each text to a
//     fair share of that (short texts whole, the long ones cut to the same
//     length); a read cuts each line at MaxLineBytes and stops before the
//     line that would pass the bound; records gives whole records and stops
//     before the one that would pass the bound (stopped: true, its cursor
//     reading on from there), cutting only a first record that alone passes
//     it. A cut text is marked (cut: true, and "[…]" in the text content),
//     and the text content says how to read the rest.
//   - An argument given as "" is absent, whatever its type (spec §5, §14):
//     models fill optional arguments they do not mean with "". It is dropped
//     before the arguments are checked, so {"scope": ""} searches the run and
//     {"path": ""} is a missing path.
//   - A bad argument (unknown field, wrong type, out of range, a path outside
//     the run) is a tool error (isError) whose text names the field; an
//     unknown tool, and a message that is not JSON-RPC, are JSON-RPC errors.
//     The session goes on after either.
//   - records and read wait for the first indexing of the run; search and
//     run_info wait at most the engine's grace (retriever.PartialGrace, 0.5
//     s; for an index restored from its cache entry 50 ms, none from 20,000
//     files: retriever.Index.AnswerGrace), then answer:
//     search from what is indexed so far (retriever.Index.SearchPartial),
//     with the indexing notice and a text whose first line says the answer
//     is partial, run_info with indexing.done false (docs/partial.md). A
//     call that carries a progress token gets notifications/progress while
//     it waits (bytes read of the bytes to read), and a cancelled call stops
//     waiting.
//   - Once the first indexing has ended and no call has been answered for
//     DefaultIdleMerge (2 s, Options.IdleMerge), the engine is asked for the
//     merges its policy picks (retriever.Index.MergeIdle), as the language
//     server does: a session that reopened a part-merged cache entry would
//     otherwise search its extra segments to the end (idle.go).
//   - With masking on, every text a tool returns (texts, error messages,
//     names, the text content) passes the masker once more before it leaves
//     the process.
//   - The stdio transport (Stdio) reads one message a line, as the MCP stdio
//     transport says. A line that is not JSON-RPC gets a JSON-RPC error and
//     the session goes on (the SDK's own transport ends the session on it);
//     a batch (a JSON array) is refused likewise (batches left MCP in
//     2025-06-18); a line of more than MaxMessageBytes is refused unread.
//     When stdin ends, the answers to the requests already read are written
//     before the session ends (at most DrainLimit later).
package mcpserver
