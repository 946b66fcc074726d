// Package lsp is the language server of runls (spec §9): it serves an editor the
// evidence of one run folder through LSP 3.16 — workspace/symbol, the custom
// requests run/search, run/info, run/records and run/failures, grouped diagnostics of
// malformed record lines, the records of a file (documentSymbol,
// foldingRange, hover), progress while indexing, and settings from the
// editor. It holds no search or parsing logic of its own: every answer comes
// from the engine (runls/retriever).
//
// The package is shaped after buf's language server: server holds all state
// (the engine, settings, the connection), handlers holds only the thin LSP
// methods, one file per feature (initialize.go, settings.go, search.go,
// info.go, recordlist.go, symbol.go, diagnostic.go, records.go, progress.go;
// unimplemented.go completes protocol.Server). jsonrpc.go and stream.go stand
// between the connection and go.lsp.dev/protocol v0.12.0 to work around what
// that version gets wrong.
//
// # Choices the spec leaves open
//
//   - Settings: each workspace/didChangeConfiguration carries the whole runls
//     section (as VS Code sends it); a key it lacks goes back to its default.
//     A key with a bad value keeps its previous value and the user is told,
//     once per change, through window/showMessage; the other keys apply. Keys
//     runls does not know (VS Code's trace.server, server.path) are ignored.
//     The message to the user names the bad value; the server's log (WARN)
//     names only the key and why, since a value can hold a secret (a token
//     pasted into the wrong field, a private path).
//   - interpreter: the rules object of spec §3, or a string: the path of a JSON
//     file holding it, absolute or relative to the run folder. The file is read
//     when the setting is applied; a changed file is read again at the next
//     configuration change. null or "": every record is a note.
//   - A new interpreter, masking or maxDiagnosticsPerFile opens a new index
//     and indexes again in the background; the request settings (agent,
//     episode, conversation, scope, topK) only change the defaults of run/search.
//   - run/search: a field absent, null or "" in the params takes the setting;
//     "topK": 0 given explicitly is out of range (-32602), as are values the
//     engine's Request.Validate rejects. Errors carry {"field", "value"} as data.
//     "allConversations": true (runls' own, no setting) takes the current
//     episode's records from every conversation, for the editors' widening of
//     a result whose hidden counts other conversations. The result's time,
//     level, matches, hidden and notices are the engine's, passed on as they are.
//   - run/records (recordlist.go, spec §13): a field absent, null or "" is not
//     given, and the settings give no defaults (episode is required: a view
//     asks for what it shows); "limit": 0 given is out of range (-32602), as
//     are the values the engine's RecordsRequest.Validate rejects (a bad
//     episode, agent, minLevel, from, to, limit or cursor), named in the
//     message and in the error's data {"field", "value"}. It waits for the
//     first indexing as run/search does. The answer is the engine's
//     RecordsResult as it is: {"records": [...], "cursor": string|null}. A
//     cursor continues by place, so a page asked after the files grew is
//     consistent with the pages before it (retriever/recordlist.go).
//   - run/failures (failures.go, spec §9): a field absent, null or "" is not
//     given, and the settings give no defaults (no episode is the whole run).
//     Two params are runls' own, for an editor that lists the groups
//     collapsed and fetches a group's records when it is expanded:
//     "maxRecords" (0–100, default 100: the locations a group lists; counts
//     stay whole) and "pattern" (only the group of that pattern, wherever it
//     ranks; none: {"groups": []}). Without them the answer is §9's, sent as
//     the engine wrote it (a preEncoded result). A bad value answers -32602
//     naming the field and the value (docs/choices.md).
//   - run/info with {"episode": "episode-N"} (runls' own, for the editors'
//     conversation pickers) adds "conversations": that episode's
//     conversations (retriever.ConversationSummary: id, agents, record
//     count, first and last time, and a line: the first told or said message
//     among its first 50 records, else its first record's first line), from
//     what is indexed so far; absent without an episode or when it has none.
//     A bad episode answers -32602 naming it.
//   - Requests that arrive while indexing: run/search waits for the first
//     indexing at most retriever.PartialGrace (0.5 s; on a reopen, whose
//     answer is the cache entry's with its files confirmed, the engine's
//     AnswerGrace: 50 ms, none from 20,000 files; docs/partial.md), then
//     answers from what is indexed so far, with the notice {"field": "indexing", "value": "40%"}
//     (spec §12, issue 33; retriever.Index.SearchPartial; the first index
//     takes the highest-numbered episode first). The grace is there so that a
//     small run (the sample run, indexed and searched by a whole runls
//     search in under 0.1 s at a load of 15: the editors' end-to-end tests
//     search it right after opening it) is still answered
//     completely; an engine without SearchPartial is waited for as before.
//     workspace/symbol does the same (retriever.Index.SymbolsPartial): its
//     answer has no place for the notice, so each symbol's containerName
//     ends with " · partial: 40% indexed". The client learns that the rest
//     has arrived from the indexing progress's end, or run/info's
//     indexing.done, and asks again (docs/partial.md; partial.go).
//     run/records, run/failures and the document requests wait for the
//     first indexing to end; run/info answers at once, its indexing field
//     telling how far indexing is.
//   - workspace/symbol: kind String; the name is the piece with white space
//     runs folded, cut at 100 characters with "…"; containerName is
//     "episode-N · agent · file within the agent's folder · conversation".
//     A query of more than retriever.MaxQueryTerms (1024) distinct terms is
//     refused with -32602 naming query, as by run/search, not cut to the
//     first 1024: that would rank another query than the one given, silently.
//   - Diagnostics: after indexing, every record file that has some is
//     published, while the run is already watched; requests go first (the
//     publishing waits while one is answered and for 50 ms after, at most
//     a second a file, and goes at the client's pace; a reply overtakes the diagnostics
//     queued, not the one being written: at 1 GB a file's Hints make some
//     360 KB), so a person's first searches are not queued behind some 80 MB
//     of them; a change the engine reports re-publishes that file (an empty
//     list clears it, for a fixed or deleted file); didOpen publishes the
//     opened file's list, empty or not. URIs are retriever.FileURI of the
//     engine's paths, under the run folder as the client names it. They carry no codeDescription: the server does
//     not know where its documentation is installed; the VS Code extension
//     links each code to its README's section.
//   - The client's capabilities (capabilities.go) are honoured as LSP says:
//     documentSymbol answers SymbolInformation[] (each conversation run,
//     then its records, in document order; a record's container its run,
//     its detail in parentheses after its name) to a client without
//     textDocument.documentSymbol.hierarchicalDocumentSymbolSupport; a record
//     is of kind Event (24) only for a client whose symbolKind valueSet
//     holds it, else String (15): LSP says a client without a valueSet knows
//     File (1) to Array (18) only, and String is the kind workspace/symbol
//     gives a piece, so a record looks alike in both lists (runs stay
//     Namespace, 3). Hovers are Markdown only for a client whose
//     hover.contentFormat holds markdown, else plain text, as gopls does.
//     $/progress begin carries percentage 0, since LSP lets a client ignore
//     the reports' percentages when the begin has none.
//   - A field of a custom request's params given as "" is absent, whatever
//     its type ("topK": "" too: editors' settings write "" for unset).
//   - Params of the wrong type answer -32602 naming the field and the value
//     given (`invalid run/records params: "limit": "abc" must be an
//     integer, not string`), with {"field", "value"} as data, as every
//     other field error does.
//   - documentSymbol, foldingRange, hover (records.go) wait for the first
//     indexing, as run/search does, and answer from the engine's record table
//     and the file on disk, never from text the editor sent. documentSymbol
//     lists at most MaxOutlineRecords (5,000) records, then one symbol
//     "… N more records" spanning the rest; foldingRange gives every range,
//     without a kind. With a healthy watcher, documentSymbol and hover first
//     bring the index up to date through the watcher's barrier (no walk), so
//     they see an append made before the request. A file that changed on
//     disk since it was read (its text no longer matches the table) answers
//     [] or null until the watcher has read it again: editors ask again when
//     a file changes. Hover is Markdown (plain text to a client that does
//     not take it), one fact a line (hard breaks), values from the file as code spans, the
//     line "evidence: yes" or "evidence: no (REASON)" as the spec writes it,
//     and after "no" the reason in words.
//   - A successful reply's result, which jsonrpc2 has already marshaled, is
//     framed as it is (stream.writeResult): Response.MarshalJSON would check
//     and compact it a second time, some 10 ms for a 100 MB log's folds.
//   - The run folder (root.go) is found from the workspace folder as gopls
//     finds go.mod: the workspace folder itself when it holds an episode-N
//     folder; else, walking up, the folder that holds the nearest episode-N
//     folder on the way (the workspace folder is an episode or agent folder,
//     or below one); else, one level down, its only child that is a run
//     folder (a folder of runs with exactly one in it). The server says which
//     folder it serves in a window/logMessage (Info) after initialized, and
//     run/info's root is that folder. Two runs side by side are not chosen
//     between: the folder is served as it is (nothing, until it becomes a run
//     folder).
//   - Every location the server sends (run/search, run/records,
//     run/failures, workspace/symbol, diagnostics, run/info's root) names the
//     run folder as the client does: a run folder opened through a symbolic
//     link is answered under the link, not under its target (the engine
//     works on the real path, spec §1; clientRoot maps its URIs).
//   - A workspace that is not a run folder serves empty answers and says why
//     once; it is looked at again every PollInterval and served as soon as it
//     has an episode-N folder.
//   - Bad input: a body that is not JSON answers -32700 with a null id; JSON
//     that is no JSON-RPC message answers -32600; after a wrong Content-Length
//     the stream finds the next "Content-Length:" header and reads on (a
//     length that runs into the next message gives that message back whole
//     when its header name was read). Requests before initialize answer -32002,
//     after shutdown -32600; unknown methods -32601; params of the wrong type
//     -32602; a cancelled request -32800 (ids as numbers or strings).
//   - Message size: a body may be up to 256 MiB (maxContentLength), since a
//     didOpen carries the whole text of the file opened and agents' logs run
//     to hundreds of MB. The bound costs nothing until bytes come: a body's
//     memory grows as it arrives, so a header declaring 256 MiB followed by
//     a few bytes costs a few KiB. A larger Content-Length is a broken
//     header: the stream looks for the next header, keeping at most the last
//     4 KiB of each line it skips.
//   - Send queue: what the server writes waits in a queue for the client,
//     bounded at 32 MiB (maxQueuedBytes: well above the largest answer, about
//     10 MB for topK 1000) for a client that stops reading. While the queue
//     holds that much, notifications ($/progress, window/logMessage,
//     window/showMessage, publishDiagnostics) are dropped, with one WARN in
//     the server's log when dropping starts and one with their count when the
//     client reads again (dropped diagnostics come back at the file's next
//     change); replies and the server's own requests are never dropped; and
//     no new message is read (each request could only add a reply), so what
//     the queue holds beyond the bound is at most the replies of the requests
//     already being answered. Nothing deadlocks: those requests finish and
//     queue their replies, and reading resumes as soon as the client reads.
//   - Order and concurrency: notifications, initialize and shutdown are
//     handled in the order they come, before the next message is read;
//     other requests are answered side by side, each cancellable by its id.
//     run/search and workspace/symbol, once the first index has ended, are
//     answered on the reading goroutine itself (inline.go: a worker's
//     hand-over was 15–40 µs of a cheap search, issue 33); nothing else is
//     read for its first 2 ms, then the messages that follow are read
//     beside it and handled in their order (a cancel acts at once, a
//     request goes to a worker, the client gone or exit cancels it), but
//     for the client's answers to the server's own requests
//     (window/workDoneProgress/create), which wait for the search to end:
//     only the reading goroutine routes them.
//   - Exit: nil from Serve (exit code 0) after shutdown, whether exit follows
//     or the client closes the connection; ErrExitWithoutShutdown (code 1)
//     otherwise, including a closed stdin.
package lsp
