// The status bar's text, fed by the real server's $/progress while it indexes a
// generated run large enough to report percentages (internal/rungen).

import { strict as assert } from 'node:assert';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { infoWhenIndexed } from '../../src/protocol';
import { DEFAULTS, initializationOptions } from '../../src/settings';
import { applyProgress, ProgressValue, ServerState, statusView } from '../../src/status';

const repoRoot = path.resolve(__dirname, '../../../../..');
const SIZE = process.env.RUNLS_PROGRESS_RUN_SIZE ?? '24MB';

test(`indexing a ${SIZE} run: starting, indexing N% rising, then ready`, { timeout: 180_000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runls-vscode-progress-'));
  let proc: ChildProcess | undefined;
  try {
    const run = path.join(dir, 'run');
    execFileSync('go', ['run', './internal/rungen/cmd/rungen', '-size', SIZE, '-episodes', '4', '-agents', '3', '-out', run], {
      cwd: repoRoot,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    let bin = process.env.RUNLS_BIN;
    if (!bin) {
      bin = path.join(dir, 'runls');
      execFileSync('go', ['build', '-o', bin, './cmd/runls'], { cwd: repoRoot, stdio: 'inherit' });
    }
    proc = spawn(bin, ['serve'], { cwd: run, stdio: ['pipe', 'pipe', 'ignore'] });
    const conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    let state: ServerState = { kind: 'starting' };
    const texts: string[] = [statusView(state, DEFAULTS).text];
    const values: ProgressValue[] = [];
    conn.onRequest('window/workDoneProgress/create', () => null);
    conn.onNotification('$/progress', (p: { value: ProgressValue }) => {
      values.push(p.value);
      state = applyProgress(state, p.value);
      const text = statusView(state, DEFAULTS).text;
      if (texts[texts.length - 1] !== text) texts.push(text);
    });
    conn.onNotification(() => undefined);
    conn.listen();
    const rootUri = pathToFileURL(fs.realpathSync(run)).href;
    await conn.sendRequest('initialize', {
      processId: process.pid,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: 'run' }],
      capabilities: { window: { workDoneProgress: true } },
      initializationOptions: initializationOptions(DEFAULTS),
    });
    await conn.sendNotification('initialized', {});
    const ri = await infoWhenIndexed(conn, { timeoutMs: 150_000 });
    assert.equal(ri.indexing.done, true);
    const end = Date.now() + 10_000;
    while (!values.some((v) => v.kind === 'end') && Date.now() < end) await new Promise((r) => setTimeout(r, 50));

    assert.equal(values[0]?.kind, 'begin', JSON.stringify(values.slice(0, 3)));
    assert.equal(values[values.length - 1].kind, 'end');
    const percents = values.filter((v) => v.kind === 'report' && typeof v.percentage === 'number').map((v) => v.percentage!);
    assert.ok(percents.length >= 2, `several percentages reported: ${percents}`);
    // The server's reports may arrive out of order (they are sent from several
    // goroutines); LSP lets clients ignore a falling value, and the status does.
    const falls = percents.filter((p, i) => i > 0 && p < percents[i - 1]).length;
    if (falls > 0) t.diagnostic(`server sent ${falls} falling percentage(s): ${percents}`);
    // What the status bar showed, in order: starting, indexing N% never falling, ready.
    assert.equal(texts[0], '$(loading~spin) runls: starting');
    const shown = texts.map((x) => /^\$\(sync~spin\) runls: indexing (\d+)%$/.exec(x)?.[1]).filter((x) => x !== undefined).map(Number);
    assert.ok(shown.length >= 2, JSON.stringify(texts));
    for (let i = 1; i < shown.length; i++) assert.ok(shown[i] >= shown[i - 1], `status never falls: ${shown}`);
    assert.equal(texts[texts.length - 1], '$(search) runls: all agents · no episode (scope: run) · no conversation');
    assert.equal(state.kind, 'ready');

    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
    const exited = proc;
    await new Promise((r) => exited.on('exit', r));
    conn.dispose();
  } finally {
    // A failed assertion must not leave the server running: it would keep this test
    // process (and the whole run) waiting.
    if (proc && proc.exitCode === null) proc.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
