// The extension's client-side request code (src/protocol.ts, src/settings.ts,
// src/results.ts, src/symbols.ts) against the real `runls serve`, built by this test,
// on testdata/sample-run, over vscode-jsonrpc (the JSON-RPC package of the
// vscode-languageclient family). No mock server.

import { strict as assert } from 'node:assert';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { createMessageConnection, MessageConnection, ResponseError, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { infoWhenIndexed, INVALID_PARAMS, search, SearchItem } from '../../src/protocol';
import { evidenceRows, sentences } from '../../src/results';
import { DEFAULTS, didChangeConfigurationParams, initializationOptions, searchParams, ServerSettings } from '../../src/settings';
import { applyProgress, ServerState } from '../../src/status';
import { arrangeSymbols } from '../../src/symbols';

const extRoot = path.resolve(__dirname, '../../..');
const repoRoot = path.resolve(extRoot, '../..');
const sampleRun = fs.realpathSync(process.env.RUNLS_SAMPLE_RUN ?? path.join(repoRoot, 'testdata/sample-run'));
const rootUri = pathToFileURL(sampleRun).href;

interface Diag {
  range: { start: { line: number; character: number } };
  severity: number;
  code: string;
  source: string;
  message: string;
}

let proc: ChildProcess;
let conn: MessageConnection;
let stderr = '';
const diagnostics = new Map<string, Diag[]>();
const progress: Array<{ kind: string; percentage?: number }> = [];
let state: ServerState = { kind: 'starting' };
const ctx: ServerSettings = { ...DEFAULTS, episode: 'episode-2', conversation: 'conv-1' };

function serverBinary(): string {
  if (process.env.RUNLS_BIN) return process.env.RUNLS_BIN;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runls-vscode-it-'));
  const bin = path.join(dir, 'runls');
  execFileSync('go', ['build', '-o', bin, './cmd/runls'], { cwd: repoRoot, stdio: 'inherit' });
  return bin;
}

/** Waits until `cond` holds, polling; the server publishes diagnostics on its own schedule. */
async function eventually(cond: () => boolean, what: string, ms = 15000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; server stderr:\n${stderr.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The text of `item`'s range in the file as written (UTF-16 units, as LSP counts). */
function textAt(item: SearchItem): string {
  const file = fileURLToPath(item.location.uri);
  const lines = fs.readFileSync(file, 'utf8').split(/\r?\n/);
  const r = item.location.range;
  assert.equal(r.start.line, r.end.line, 'a piece lies on one line');
  return lines[r.start.line].slice(r.start.character, r.end.character);
}

before(async () => {
  const bin = serverBinary();
  proc = spawn(bin, ['serve', '--stdio'], { cwd: sampleRun, stdio: ['pipe', 'pipe', 'pipe'] });
  proc.stderr!.on('data', (d) => (stderr += d.toString()));
  conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onNotification('$/progress', (p: { value: { kind: 'begin' | 'report' | 'end'; percentage?: number } }) => {
    progress.push(p.value);
    state = applyProgress(state, p.value);
  });
  conn.onNotification('textDocument/publishDiagnostics', (p: { uri: string; diagnostics: Diag[] }) => {
    diagnostics.set(p.uri, p.diagnostics);
  });
  conn.onNotification('window/logMessage', () => undefined);
  conn.onRequest('workspace/configuration', (p: { items: Array<{ section?: string }> }) => p.items.map(() => ctx));
  conn.listen();
  const result = await conn.sendRequest<{ capabilities: Record<string, unknown> }>('initialize', {
    processId: process.pid,
    rootUri,
    workspaceFolders: [{ uri: rootUri, name: 'sample-run' }],
    capabilities: { window: { workDoneProgress: true }, workspace: { configuration: true, symbol: {} } },
    initializationOptions: initializationOptions(ctx),
  });
  assert.ok(result.capabilities.workspaceSymbolProvider, 'server offers workspace/symbol');
  // Outline, breadcrumbs and sticky scroll, folding by record, hover (spec §11).
  for (const cap of ['documentSymbolProvider', 'foldingRangeProvider', 'hoverProvider']) assert.ok(result.capabilities[cap], `server offers ${cap}`);
  await conn.sendNotification('initialized', {});
});

after(async () => {
  if (!conn) return;
  try {
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
  } catch {
    // the process may be gone already; the exit check below says so
  }
  const code = await new Promise<number | null>((resolve) => {
    if (proc.exitCode !== null) return resolve(proc.exitCode);
    const t = setTimeout(() => {
      proc.kill('SIGKILL');
      resolve(null);
    }, 5000);
    proc.on('exit', (c) => {
      clearTimeout(t);
      resolve(c);
    });
  });
  conn.dispose();
  assert.equal(code, 0, `server exits 0 after shutdown/exit; stderr:\n${stderr.slice(-2000)}`);
});

test('run/info lists agents, episodes in numeric order and episode-2 conversations', async () => {
  const ri = await infoWhenIndexed(conn, { timeoutMs: 15000 });
  assert.equal(ri.indexing.done, true);
  assert.deepEqual(ri.agents, ['alice', 'bob', 'carol']);
  assert.deepEqual(ri.episodes.map((e) => e.episode), ['episode-1', 'episode-2', 'episode-3', 'episode-10']);
  const ep2 = ri.episodes.find((e) => e.episode === 'episode-2')!;
  assert.deepEqual(ep2.conversations, ['conv-1', 'conv-2', 'conv-3']);
  assert.deepEqual(ri.episodes.find((e) => e.episode === 'episode-10')!.agents, ['alice']);
  assert.ok(ri.indexing.files > 0);
});

test('run/search ranks evidence best first, each item pointing at its text in the file', async () => {
  const r = await search(conn, searchParams('deploy database migration', ctx));
  assert.ok(r.items.length > 0 && r.items.length <= ctx.topK, `got ${r.items.length} items`);
  for (let i = 1; i < r.items.length; i++) assert.ok(r.items[i - 1].score >= r.items[i].score, 'best first');
  for (const it of r.items) {
    assert.equal(textAt(it), it.text, `${it.location.uri}:${it.location.range.start.line + 1}`);
    assert.match(it.episode, /^episode-\d+$/);
  }
  // Several agents and episodes hold evidence for this query (testdata/README.md).
  const top = await search(conn, { ...searchParams('deploy database migration', ctx), topK: 50 });
  assert.ok(new Set(top.items.map((i) => i.agent)).size >= 2);
  assert.ok(new Set(top.items.map((i) => i.episode)).size >= 2);
  // Records of the current episode come only from its conversation or from none.
  for (const it of top.items) {
    if (it.episode === 'episode-2' && it.conversation !== null) assert.ok(['conv-1', '-'].includes(it.conversation), it.conversation);
  }
  // The results view shows them in that order, each highlighting the query's words.
  const rows = evidenceRows(r.items, rootUri);
  assert.deepEqual(rows.map((row) => row.item.location), r.items.map((i) => i.location));
  rows.forEach((row, i) => {
    assert.ok(row.label.startsWith(`#${i + 1}  `), row.label);
    assert.ok(row.highlights.length > 0, `the query's words in ${row.label}`);
    for (const [s, e] of row.highlights) assert.match(row.label.slice(s, e).toLowerCase(), /^(deploy|database|migration)$/);
    assert.match(row.description, /episode-\d+\/\w+\/\S+:\d+$/);
  });
  // A record's time and level come with it: bob.log's ERROR record, a note's none.
  const err = await search(conn, { ...searchParams('migration dry-run failed', ctx), topK: 50 });
  const log = err.items.find((i) => i.location.uri.endsWith('/episode-2/bob/bob.log'));
  assert.ok(log, JSON.stringify(err.items.map((i) => i.location.uri)));
  assert.match(log.time ?? '', /^2026-10-21 18:01:02\.310$/);
  assert.equal(log.level, 'ERROR');
  for (const it of err.items.filter((i) => !/\.(history|log)$/.test(i.location.uri))) assert.equal(it.time, null);
});

test('run/search says what its filters hid, and the view says it in words with a widening', async () => {
  const r = await search(conn, { ...searchParams('hotel booking', ctx), topK: 5 });
  assert.ok((r.hidden.otherConversation ?? 0) > 0, JSON.stringify(r.hidden));
  const said = sentences(r, { agent: '', episode: 'episode-2', conversation: 'conv-1' });
  const other = said.find((s) => /in other conversations of episode-2$/.test(s.text));
  assert.ok(other, JSON.stringify(said));
  assert.equal(other.action?.widening.kind, 'allConversations');
  // The widening shows them.
  const all = await search(conn, { ...searchParams('hotel booking', ctx), topK: 5, allConversations: true });
  assert.equal(all.hidden.otherConversation ?? 0, 0, JSON.stringify(all.hidden));
  assert.ok(all.items.some((i) => i.episode === 'episode-2' && i.conversation !== null && !['conv-1', '-'].includes(i.conversation)));
  // A request value the run does not hold is a notice, with the name it probably meant.
  const bob = await search(conn, { ...searchParams('hotel booking', ctx), agent: 'Bob' });
  assert.deepEqual(bob.notices.map((n) => [n.field, n.suggestion]), [['agent', 'bob']]);
});

test('files that belong to no agent are never searched', async () => {
  const r = await search(conn, searchParams('quokka', ctx));
  assert.deepEqual(r.items, []);
});

test('without episode and conversation, record files give no evidence', async () => {
  const r = await search(conn, { query: 'migration', episode: '', conversation: '', topK: 50 });
  // The server takes absent fields from its settings, so unset them there first.
  await conn.sendNotification('workspace/didChangeConfiguration', didChangeConfigurationParams({ ...ctx, episode: '', conversation: '' }));
  const bare = await search(conn, { query: 'migration', topK: 50 });
  assert.ok(bare.items.length > 0, 'notes and plain files still give evidence');
  for (const it of bare.items) assert.ok(!/\.(history|log)$/.test(it.location.uri), `record file given: ${it.location.uri}`);
  assert.ok(r.items.some((it) => /\.(history|log)$/.test(it.location.uri)), 'with the context, record files give evidence');
  assert.ok(r.items.length >= bare.items.length);
  await conn.sendNotification('workspace/didChangeConfiguration', didChangeConfigurationParams(ctx));
});

test('settings sent again on change apply to searches that leave the field out', async () => {
  await conn.sendNotification('workspace/didChangeConfiguration', didChangeConfigurationParams({ ...ctx, agent: 'bob', topK: 50 }));
  const r = await search(conn, { query: 'migration' });
  assert.ok(r.items.length > 0);
  assert.deepEqual([...new Set(r.items.map((i) => i.agent))], ['bob']);
  await conn.sendNotification('workspace/didChangeConfiguration', didChangeConfigurationParams(ctx));
  const all = await search(conn, { query: 'migration', topK: 50 });
  assert.ok(new Set(all.items.map((i) => i.agent)).size > 1, 'agent unset again');
});

test('invalid params answer -32602 naming the field', async () => {
  for (const [params, field] of [
    [{ query: 'x', episode: 'ep2' }, 'episode'],
    [{ query: 'x', scope: 'world' }, 'scope'],
    [{ query: 'x', topK: 0 }, 'topK'],
    [{ query: 'x', agent: '../bob' }, 'agent'],
  ] as const) {
    await assert.rejects(search(conn, params as never), (e: unknown) => {
      assert.ok(e instanceof ResponseError, String(e));
      assert.equal(e.code, INVALID_PARAMS);
      assert.match(e.message, new RegExp(field));
      return true;
    });
  }
});

test('format warnings are published for record files, grouped, with codes, severity and source runls', async () => {
  const bobLog = pathToFileURL(path.join(sampleRun, 'episode-2/bob/bob.log')).href;
  await eventually(() => (diagnostics.get(bobLog)?.length ?? 0) > 0, `diagnostics for ${bobLog}`);
  const d = diagnostics.get(bobLog)!;
  // One diagnostic for the stack trace's four lines, not one a line. Every one of
  // them a stack-trace line: a Hint (4) naming the exception and giving the number
  // (spec §9 rev 3), nothing a reader must fix.
  assert.equal(d.length, 1, JSON.stringify(d));
  assert.equal(d[0].severity, 4);
  assert.equal(d[0].source, 'runls');
  assert.equal(d[0].code, 'unindented-continuation');
  assert.equal(d[0].range.start.line, 3);
  assert.match(d[0].message, /^java\.lang\.IllegalStateException: column "currency" of relation "invoices" already exists/);
  assert.match(d[0].message, /\b4\b/);
  // A file written before 0.18.6: one Information (3), nothing to fix.
  const ep1 = pathToFileURL(path.join(sampleRun, 'episode-1/alice/alice.log')).href;
  await eventually(() => (diagnostics.get(ep1)?.length ?? 0) > 0, `diagnostics for ${ep1}`);
  const info = diagnostics.get(ep1)!;
  assert.equal(info.length, 1, JSON.stringify(info));
  assert.equal(info[0].code, 'unfielded-line');
  assert.equal(info[0].severity, 3);
  assert.match(info[0].message, /predates the conversation field/);
  const notes = pathToFileURL(path.join(sampleRun, 'episode-2/alice/notes.md')).href;
  assert.equal(diagnostics.get(notes)?.length ?? 0, 0, 'plain files get no format warnings');
});

test('workspace/symbol ranks every term of a +-joined query; the middleware keeps that order', async () => {
  type Sym = { name: string; containerName?: string; location: { uri: string } };
  const syms = await conn.sendRequest<Sym[]>('workspace/symbol', { query: 'hotel+booking' });
  assert.ok(syms.length > 0);
  assert.ok(syms.length <= 100);
  // Both terms rank: the best symbol holds both words.
  assert.match(syms[0].name, /hotel/i);
  assert.match(syms[0].name, /booking/i);
  const names = syms.map((s) => s.name);
  const arranged = arrangeSymbols('hotel+booking', syms.map((s) => ({ ...s })));
  const vscodeOrder = [...arranged].sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
  assert.deepEqual(vscodeOrder.map((s) => s.name.replace(/^hotel\+booking #\d+ /, '')), names);
});

test('the server reports its indexing as work-done progress; the status ends ready', async () => {
  await eventually(() => progress.some((p) => p.kind === 'end'), 'progress end');
  assert.equal(progress[0].kind, 'begin');
  assert.equal(progress.filter((p) => p.kind === 'begin').length, progress.filter((p) => p.kind === 'end').length);
  assert.equal(state.kind, 'ready');
});
