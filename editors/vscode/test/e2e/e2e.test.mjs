// End to end in real VS Code: code-server (VS Code 1.100.3 in a browser) on
// 127.0.0.1, driven by playwright-core with Debian's chromium. Installs the built
// .vsix, opens a copy of testdata/sample-run, and checks what a user sees.
//
// Needs: CODE_SERVER (its binary), RUNLS_BIN (the built server), VSIX (the package);
// optional CHROMIUM (default /usr/bin/chromium), ARTIFACTS (screenshots; default
// test-artifacts/), RUNLS_SAMPLE_RUN.

import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const extRoot = path.resolve(here, '../..');
const repoRoot = path.resolve(extRoot, '../..');
const CODE_SERVER = must('CODE_SERVER');
const RUNLS_BIN = must('RUNLS_BIN');
const VSIX = process.env.VSIX ?? path.join(extRoot, 'runls.vsix');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = path.resolve(process.env.ARTIFACTS ?? path.join(extRoot, 'test-artifacts'));
const SAMPLE = process.env.RUNLS_SAMPLE_RUN ?? path.join(repoRoot, 'testdata/sample-run');
const QUERY = 'deploy database migration';
// The interpreter of spec §3 (told/said/leftOut), given to the extension as a setting.
const INTERPRETER = path.join(repoRoot, 'testdata/interpreter.json');
const TIMEOUT = 30_000;
const PAGE_SIZE = 20;
// A generated run (internal/rungen) whose episode-2/bob/bob.log has an ERROR record
// on its line 246, in a conversation of some hundred records.
const GEN = { size: '2MB', seed: '4', episodes: '3', agents: '3', file: 'episode-2/bob/bob.log', line: 246 };

let work, run, server, context, page, port;
let serverLog = '';

function must(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run scripts/test.sh)`);
  return v;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
    s.on('error', reject);
  });
}

async function waitHttp(url, ms) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > end) throw new Error(`code-server did not answer ${url}; its log:\n${serverLog.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function shot(name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, name);
  await page.screenshot({ path: file });
  return file;
}

/** Opens the command palette and runs the command with this exact title. */
async function runCommand(title) {
  await quickInput(`>${title}`, title);
  await page.keyboard.press('Enter');
}

/**
 * Opens the command palette, types text into it and waits for a row holding
 * rowText; the palette is left open on it. While the workbench moves focus (a view
 * or a notification taking it), F1 is sometimes lost, or the palette opens and
 * closes again before it is typed into: the whole step is tried again. A fill
 * can also land in the editor the focus moved to (clean-clone CI: goToLine's ':3'
 * typed at the start of bob.log's ERROR line, which then read as a continuation
 * of the record before, and the hover test saw that record): an editor that was
 * clean and is dirty afterwards is reverted and the step tried again.
 */
async function quickInput(text, rowText, lastTimeout = 20_000, guardEditor = true) {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: rowText }).first();
  const wasDirty = guardEditor && (await activeEditorDirty());
  for (let attempt = 0; ; attempt++) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    try {
      await input.waitFor({ state: 'visible', timeout: 5000 });
      await input.fill(text, { timeout: 5000 });
      await row.waitFor({ state: 'visible', timeout: attempt === 3 ? lastTimeout : 10_000 });
    } catch (e) {
      if (attempt === 3) throw e;
      continue;
    }
    if (!guardEditor || wasDirty || !(await activeEditorDirty())) return;
    if (attempt === 3) throw new Error(`quick input "${text}": typed into the editor each time`);
    await revertActiveEditor();
  }
}

/** Whether the active editor tab has unsaved changes. */
async function activeEditorDirty() {
  return (await page.locator('.tabs-container .tab.active.dirty').count()) > 0;
}

/** Reverts the active editor to the file on disk (text typed into it by mistake). */
async function revertActiveEditor() {
  await quickInput('>File: Revert File', 'File: Revert File', TIMEOUT, false);
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active.dirty').waitFor({ state: 'detached', timeout: TIMEOUT });
}

/**
 * Runs a picker command, fills `label` into the picker titled `title` and takes the
 * row holding it with Enter. A picker opened while the workbench still moves the focus
 * (the Evidence view focused by the search just shown, at a load of 8: clean-clone
 * run B-2) closes again, and its row stays hidden: then the whole pick is made again,
 * at most three times, each retry said in the TAP diagnostics. `beforeEnter` runs with
 * the row shown (a screenshot).
 */
async function pickWith(t, command, title, label, beforeEnter) {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: label }).first();
  for (let attempt = 1; ; attempt++) {
    const timeout = attempt < 3 ? TIMEOUT / 3 : TIMEOUT;
    try {
      await runCommand(command);
      await page.locator('.quick-input-widget .quick-input-title', { hasText: title }).first().waitFor({ state: 'visible', timeout });
      await input.fill(label, { timeout });
      await row.waitFor({ state: 'visible', timeout });
      if (beforeEnter) await beforeEnter();
      await input.press('Enter', { timeout });
      return;
    } catch (e) {
      if (attempt === 3) throw e;
      t?.diagnostic(`${command}: the picker did not show "${label}" (attempt ${attempt}: ${e.message.split('\n')[0]}); picking again`);
      await page.keyboard.press('Escape');
    }
  }
}

async function waitTitle(text) {
  await page.locator('.quick-input-widget .quick-input-title', { hasText: text }).first().waitFor({ state: 'visible', timeout: TIMEOUT });
}

async function rows() {
  const r = page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
  await r.first().waitFor({ state: 'visible', timeout: TIMEOUT });
  return r.evaluateAll((els) => els.map((e) => ({ index: Number(e.getAttribute('data-index')), text: e.innerText.replace(/\s+/g, ' ').trim() })));
}

function cliSearch(args) {
  const out = execFileSync(RUNLS_BIN, ['search', '--json', ...args], { encoding: 'utf8' });
  return JSON.parse(out).items;
}

// A log with several records whose unindented continuation lines are not all stack
// lines (four warnings, for the cap: a note line among the stack lines keeps each a
// Warning, spec §9 rev 3) and one record of 120 stack lines (for sticky scroll), added
// to the copy of the sample run. Its words are none of the queries', so the search
// tests see the sample run's evidence.
const WORKER_LOG = 'episode-3/carol/worker.log';
const LONG_RECORD_LINE = 13; // 0-based: the long record's first line
function workerLog() {
  const lines = ['2026-10-22 10:00:00.000 INFO  [running] [conv-5] Carol worker started'];
  for (let i = 1; i <= 3; i++) {
    lines.push(`2026-10-22 10:0${i}:00.000 ERROR [running] [conv-5] Carol job ${i} failed`);
    lines.push(`java.lang.IllegalStateException: job ${i}`);
    lines.push(`job ${i} gave up after its retries`);
    lines.push(`\tat com.example.worker.Job.run(Job.java:${10 + i})`);
  }
  lines.push('2026-10-22 10:05:00.000 ERROR [running] [conv-6] Carol the long job failed');
  lines.push('java.lang.RuntimeException: the long job');
  lines.push('the long job gave up');
  for (let i = 0; i < 120; i++) lines.push(`\tat com.example.worker.Step${i}.run(Step${i}.java:${i + 1})`);
  lines.push('2026-10-22 10:06:00.000 INFO  [finished] [-] Carol worker stopped');
  return lines.join('\n') + '\n';
}

/**
 * The rows of the Problems panel under one file's row (its name then its folder, as the
 * panel writes them), whatever the panel's filter shows besides.
 */
async function problemsOf(fileRow) {
  const rows = await page
    .locator('.markers-panel .monaco-list-row[aria-level]')
    .evaluateAll((els) => els.map((e) => ({ level: Number(e.getAttribute('aria-level')), text: e.innerText.replace(/\s+/g, ' ').trim() })));
  const at = rows.findIndex((r) => r.level === 1 && r.text.startsWith(fileRow));
  if (at < 0) return [];
  const out = [];
  for (const r of rows.slice(at + 1)) {
    if (r.level === 1) break;
    out.push(r.text);
  }
  return out;
}

/** Opens a file of the run by its path, through Quick Open. */
async function openFile(rel) {
  await quickInput(rel, path.basename(rel), TIMEOUT);
  await page.keyboard.press('Enter');
  const tab = page.locator('.tabs-container .tab.active', { hasText: path.basename(rel) });
  await tab.waitFor();
  // A filter filled while the workbench moved the focus to an editor can type into
  // that editor instead (clean-clone CI: the Problems test's 'worker.log' landed in
  // bob.log, whose hover then showed the record before). The tests read the run's
  // files as they are on disk: an edited one is reverted.
  if (await tab.evaluate((e) => e.classList.contains('dirty'))) await revertActiveEditor();
}

/**
 * Moves the cursor to a 1-based line of the active editor. Enter is pressed only
 * once Quick Open offers the line (under load, an Enter before the picker has
 * switched to line mode was lost), and the whole move is tried again if the
 * status bar does not show the line.
 */
async function goToLine(line) {
  const status = page.locator('.statusbar-item', { hasText: `Ln ${line},` }).first();
  for (let attempt = 1; ; attempt++) {
    await quickInput(`:${line}`, `line ${line}`, TIMEOUT);
    await page.keyboard.press('Enter');
    try {
      await status.waitFor({ timeout: attempt < 3 ? TIMEOUT / 3 : TIMEOUT });
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

before(async () => {
  for (const p of [CODE_SERVER, RUNLS_BIN, VSIX, CHROMIUM]) assert.ok(fs.existsSync(p), `missing ${p}`);
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'runls-e2e-'));
  run = path.join(work, 'sample-run');
  fs.cpSync(SAMPLE, run, { recursive: true });
  fs.writeFileSync(path.join(run, WORKER_LOG), workerLog());
  const ud = path.join(work, 'user-data');
  const ext = path.join(work, 'extensions');
  const cfg = path.join(work, 'config.yaml');
  port = await freePort();
  fs.writeFileSync(cfg, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  fs.mkdirSync(path.join(ud, 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(ud, 'User', 'settings.json'),
    JSON.stringify({
      'workbench.startupEditor': 'none',
      // code-server saves an edited file after a delay: a key that reached an editor
      // (a palette's fill after the focus moved) would change the run on disk, where
      // no revert undoes it (clean-clone CI: ':3' saved into bob.log's ERROR line).
      // Unsaved, the edit shows as a dirty tab, which quickInput and openFile revert.
      'files.autoSave': 'off',
      'workbench.tips.enabled': false,
      'workbench.welcomePage.walkthroughs.openOnInstall': false,
      'security.workspace.trust.enabled': false,
      'extensions.ignoreRecommendations': true,
      'telemetry.telemetryLevel': 'off',
      'update.mode': 'none',
      'workbench.colorTheme': 'Default Dark Modern',
      'window.zoomLevel': 0,
      // The extension host's PATH comes from a login shell that /etc/profile resets,
      // so the server is named here (PATH lookup is covered by the unit tests).
      'runls.server.path': RUNLS_BIN,
      // Small pages, so that a conversation of the generated run spans several.
      'runls.conversation.pageSize': PAGE_SIZE,
      'runls.interpreter': JSON.parse(fs.readFileSync(INTERPRETER, 'utf8')),
    }),
  );
  // runls.server.path is machine-scoped: a code-server window is a remote one, whose User
  // settings lose it once the extension's settings are registered (a race: before that,
  // the User value is read; after, it is not — the generated run's windows read it empty
  // in 2 of 4 runs in the twelfth session, and the miss's log line showed `user (none)`
  // beside the other User settings). Its place is the Remote settings, code-server's
  // Machine/settings.json, as a user of a remote window is told (openServerPathSetting).
  fs.mkdirSync(path.join(ud, 'Machine'), { recursive: true });
  fs.writeFileSync(path.join(ud, 'Machine', 'settings.json'), JSON.stringify({ 'runls.server.path': RUNLS_BIN }));
  const common = ['--config', cfg, '--user-data-dir', ud, '--extensions-dir', ext];
  // A server built with -tags runls_holdindex (RUNLS_HOLD_BIN) holds its first index
  // after one batch until this file exists; the one under test ignores it.
  const env = { ...process.env, HOME: path.join(work, 'home'), RUNLS_HOLD_INDEX: path.join(work, 'release-partial') };
  fs.mkdirSync(env.HOME);
  execFileSync(CODE_SERVER, [...common, '--install-extension', VSIX], { env, stdio: 'pipe' });
  server = spawn(
    CODE_SERVER,
    [...common, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--disable-getting-started-override', run],
    { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // If this process is killed before its after() runs, scripts/test.sh ends the group.
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  fs.writeFileSync(path.join(ARTIFACTS, 'code-server.pgid'), String(server.pid));
  server.stdout.on('data', (d) => (serverLog += d));
  server.stderr.on('data', (d) => (serverLog += d));
  await waitHttp(`http://127.0.0.1:${port}/healthz`, 60_000);

  context = await chromium.launchPersistentContext(path.join(work, 'chromium'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(TIMEOUT);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(run)}`);
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
});

after(async () => {
  try {
    if (page) await shot('last.png');
  } catch {
    // the page may be gone
  }
  await context?.close().catch(() => undefined);
  if (server?.pid) {
    try {
      process.kill(-server.pid, 'SIGTERM'); // its own process group: code-server and its helpers
    } catch {
      // already gone
    }
  }
  fs.writeFileSync(path.join(ARTIFACTS, 'code-server.log'), serverLog);
  fs.rmSync(path.join(ARTIFACTS, 'code-server.pgid'), { force: true });
  if (work && !process.env.KEEP_E2E) fs.rmSync(work, { recursive: true, force: true });
});

test('the extension activates on the run folder and the status bar shows the server ready', async () => {
  const item = page.locator('.statusbar-item', { hasText: 'runls:' }).first();
  await item.waitFor({ state: 'visible', timeout: 60_000 });
  await page.locator('.statusbar-item', { hasText: 'runls: all agents · no episode (scope: run) · no conversation' }).first().waitFor({ timeout: 60_000 });
});

/** The results view's pane (its header reads "Evidence"). */
function evidencePane() {
  return page.locator('.pane', { has: page.locator('.pane-header', { hasText: /Evidence/i }) }).first();
}

/** The rows of the results view, in order, with their highlighted words and selection. */
async function viewRows() {
  const pane = evidencePane();
  await pane.locator('.monaco-list-row').first().waitFor({ state: 'visible', timeout: TIMEOUT });
  const rows = await pane.locator('.monaco-list-row').evaluateAll((els) =>
    els.map((e) => ({
      index: Number(e.getAttribute('data-index')),
      text: e.innerText.replace(/\s+/g, ' ').trim(),
      highlights: [...e.querySelectorAll('.highlight')].map((h) => h.textContent),
      selected: e.getAttribute('aria-selected') === 'true' || e.classList.contains('selected'),
    })),
  );
  return rows.sort((a, b) => a.index - b.index);
}

/** Waits until the results view's message holds `text` (the query, count and context). */
async function waitMessage(text) {
  await evidencePane().locator('.message', { hasText: text }).first().waitFor({ state: 'visible', timeout: TIMEOUT });
}

/** The evidence rows ("#N  …") of the results view. */
async function evidenceRows() {
  return (await viewRows()).filter((r) => /^#\d+ /.test(r.text));
}

/**
 * The evidence rows once they show `expected` (items of runls search --json) in its
 * order: the view's message changes before its rows are drawn again.
 */
async function rowsShowing(expected) {
  const end = Date.now() + TIMEOUT;
  const want = expected.map((e) => e.text.replace(/\s+/g, ' ').slice(0, 40));
  let rows = [];
  while (Date.now() < end) {
    rows = await evidenceRows();
    if (rows.length === want.length && rows.every((r, i) => r.text.includes(want[i]))) return rows;
    await page.waitForTimeout(200);
  }
  assert.fail(`the view shows ${JSON.stringify(rows.map((r) => r.text))}, want ${JSON.stringify(want)}`);
}

/** Waits until the status bar shows the cursor at `item`'s start with the piece selected. */
async function waitSelected(item) {
  const { start, end } = item.location.range;
  await page
    .locator('.statusbar-item', { hasText: `Ln ${start.line + 1}, Col ${start.character + 1} (${end.character - start.character} selected)` })
    .first()
    .waitFor({ timeout: TIMEOUT });
}

/**
 * Waits until nothing stands between the mouse and the results view's rows: the mouse
 * rests on the view's message (above the rows) with no hover shown (a row's hover,
 * left by the mouse where a test before clicked, lies over the rows below it), and the
 * view shows no progress (a search still running redraws the rows).
 */
async function viewIdle() {
  const pane = evidencePane();
  await pane.locator('.message').first().hover();
  await page.locator('.workbench-hover-container .workbench-hover, .monaco-hover:not(.hidden)').first().waitFor({ state: 'hidden', timeout: TIMEOUT });
  await pane.locator('.monaco-progress-container.active').first().waitFor({ state: 'hidden', timeout: TIMEOUT });
}

/**
 * Clicks a row of the results view and waits for what it does (`done`, a promise
 * maker). The view is idle first (viewIdle). If the click's effect does not come, the
 * row (which the click focused) is opened from the keyboard, Enter, as the list's own
 * open; that is reported (`t.diagnostic`, a screenshot), so that a click lost in CI
 * shows in its log, and a row that opens neither way fails.
 */
async function clickRow(t, row, done, what) {
  await viewIdle();
  await row.click();
  try {
    await done(TIMEOUT / 2);
    return;
  } catch (e) {
    const file = await shot(`click-lost-${what.replace(/\W+/g, '-')}.png`);
    const focused = await page.evaluate(() => document.activeElement?.className ?? '');
    t?.diagnostic(`${what}: the click on the row had no effect in ${TIMEOUT / 2} ms (${e.message.split('\n')[0]}; focus on "${focused}"; ${file}); Enter on it`);
  }
  if (!(await row.evaluate((e) => e.classList.contains('focused')).catch(() => false))) await row.click();
  await page.keyboard.press('Enter');
  await done(TIMEOUT);
}

/**
 * Runs item `item` of the context menu of the results view's row holding `rowText`,
 * from the keyboard: the view is focused (its Focus command), the row reached with the
 * arrow keys (they move the list's focus and open nothing), Shift+F10 opens the row's
 * menu, the arrow keys reach the item and Enter runs it. A mouse click on the menu's
 * item was not always taken (clean-clone CI of cddc4bb: the menu stayed open after the
 * click, twice); each step here waits for the state the key made.
 */
async function rowMenuItem(rowText, item) {
  const pane = evidencePane();
  const focusedRow = pane.locator('.monaco-list-row.focused');
  const inPane = () => page.waitForFunction(() => {
    const a = document.activeElement;
    const p = a?.closest('.pane');
    return !!p && /Evidence/i.test(p.querySelector('.pane-header')?.textContent ?? '') && !!a.closest('.monaco-list');
  }, null, { timeout: TIMEOUT / 3 });
  for (let attempt = 1; ; attempt++) {
    try {
      await runCommand('Focus on Evidence View');
      await inPane();
      break;
    } catch (e) {
      if (attempt === 3) throw new Error(`the Evidence view did not take the focus: ${e.message}`);
    }
  }
  await page.keyboard.press('Home');
  for (let i = 0; ; i++) {
    const text = await focusedRow.first().innerText({ timeout: TIMEOUT / 3 }).catch(() => '');
    if (text.includes(rowText)) break;
    assert.ok(i < 40, `no row holding "${rowText}" reached with the arrow keys (last: ${text})`);
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction((prev) => {
      const rows = [...document.querySelectorAll('.pane .monaco-list-row.focused')];
      return rows.some((r) => r.innerText !== prev);
    }, text, { timeout: TIMEOUT / 3 }).catch(() => undefined);
  }
  const menu = page.locator('.context-view .monaco-menu');
  await page.keyboard.press('Shift+F10');
  await menu.first().waitFor({ state: 'visible', timeout: TIMEOUT });
  const items = await page.locator('.context-view .action-label').allInnerTexts();
  const focusedItem = page.locator('.context-view .action-item.focused');
  for (let i = 0; ; i++) {
    const text = await focusedItem.first().innerText({ timeout: 1000 }).catch(() => '');
    if (text.includes(item)) break;
    assert.ok(i < 10, `the menu's item "${item}" not reached with the arrow keys; the menu holds ${JSON.stringify(items)}`);
    await page.keyboard.press('ArrowDown');
  }
  await page.keyboard.press('Enter');
  await menu.first().waitFor({ state: 'hidden', timeout: TIMEOUT });
}

test('Search Agent Memory: pick the chat context, type a query, the results view lists the ranked evidence', async () => {
  await runCommand('runls: Search Agent Memory');
  // No episode and no conversation yet: the command offers the pick.
  await waitTitle('no episode and no conversation set');
  await page.keyboard.press('Enter'); // "Pick the chat context"
  await waitTitle('Pick the current episode');
  await page.keyboard.type('episode-2');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'episode-2' }).first().waitFor();
  await page.keyboard.press('Enter');
  await waitTitle('Pick the conversation (of episode-2)');
  await page.keyboard.type('conv-1');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'conv-1' }).first().waitFor();
  await page.keyboard.press('Enter');
  await waitTitle('runls: Search Agent Memory');
  await page.keyboard.type(QUERY);
  await page.keyboard.press('Enter');
  await waitMessage('pieces of evidence');

  // The server's ranking, as the command line gives it for the same request.
  const expected = cliSearch(['--interpreter', INTERPRETER, '--episode', 'episode-2', '--conversation', 'conv-1', '--top-k', '5', run, QUERY]);
  assert.ok(expected.some((e) => e.reading === 'told'), 'the interpreter setting reached the server');
  assert.ok(expected.length === 5, 'the sample run has five pieces for the query and more');
  const shown = await rowsShowing(expected);
  assert.equal(shown.length, expected.length, JSON.stringify(shown));
  shown.forEach((row, i) => {
    assert.ok(row.text.startsWith(`#${i + 1} `), `row ${i} is rank ${i + 1}: ${row.text}`);
    assert.ok(row.text.includes(expected[i].text.replace(/\s+/g, ' ').slice(0, 40)), `row ${i} shows "${expected[i].text}": ${row.text}`);
    assert.ok(row.text.startsWith(`#${i + 1} ${expected[i].episode} · ${expected[i].agent}`), `the row leads with its episode and agent: ${row.text}`);
    if (expected[i].time) assert.ok(row.text.includes(expected[i].time), `row ${i} shows its time: ${row.text}`);
    if (expected[i].level) assert.ok(row.text.includes(expected[i].level), `row ${i} shows its level: ${row.text}`);
    // The query's words, highlighted where the server's matches say.
    const words = expected[i].matches.map(([a, b]) => expected[i].text.slice(a, b).toLowerCase());
    assert.deepEqual(row.highlights.map((h) => h.toLowerCase()), words, `row ${i}'s highlights: ${row.text}`);
    assert.ok(row.highlights.length > 0, row.text);
  });
  await shot('results-view.png');

  // The context lives in the extension's workspace state: the run folder got no .vscode.
  assert.equal(fs.existsSync(path.join(run, '.vscode')), false, 'the run folder holds no .vscode folder');
  await page.locator('.statusbar-item', { hasText: 'runls: all agents · episode-2 (scope: run) · conv-1' }).first().waitFor();
});

test('a row opens its evidence in a preview tab; Next Evidence (F4) moves to #2 and selects it', async (t) => {
  const expected = cliSearch(['--interpreter', INTERPRETER, '--episode', 'episode-2', '--conversation', 'conv-1', '--top-k', '5', run, QUERY]);
  const pane = evidencePane();
  const first = path.basename(fileURLToPath(expected[0].location.uri));
  await clickRow(t, pane.locator('.monaco-list-row', { hasText: '#1 ' }).first(),
    (timeout) => page.locator('.tabs-container .tab.active', { hasText: first }).waitFor({ timeout }), 'row #1');
  await waitSelected(expected[0]);
  const tabs = await page.locator('.tabs-container .tab').count();

  await page.keyboard.press('F4');
  const second = path.basename(fileURLToPath(expected[1].location.uri));
  await page.locator('.tabs-container .tab.active', { hasText: second }).waitFor({ timeout: TIMEOUT });
  await waitSelected(expected[1]);
  await page.locator('.monaco-editor .view-line', { hasText: expected[1].text.slice(0, 40) }).first().waitFor({ state: 'visible' });
  const rows = await evidenceRows();
  assert.ok(rows[1].selected, `#2 is selected in the view: ${JSON.stringify(rows.map((r) => [r.text.slice(0, 12), r.selected]))}`);
  if (first !== second) {
    // A preview tab: the second piece took the first one's tab.
    assert.equal(await page.locator('.tabs-container .tab').count(), tabs, 'opened in the preview tab, no new tab pinned');
  }
  await shot('evidence-opened.png');

  await page.keyboard.press('Shift+F4');
  await waitSelected(expected[0]);
});

test('Load more adds the next pieces after the first five', async (t) => {
  const expected = cliSearch(['--interpreter', INTERPRETER, '--episode', 'episode-2', '--conversation', 'conv-1', '--top-k', '10', run, QUERY]);
  assert.ok(expected.length > 5, 'more than five pieces');
  await clickRow(t, evidencePane().locator('.monaco-list-row', { hasText: 'Load more' }).first(),
    (timeout) => evidencePane().locator('.message', { hasText: `${expected.length} pieces of evidence` }).first().waitFor({ timeout }), 'Load more');
  await rowsShowing(expected);
  // A wider side bar, as someone reading results makes it, for the README's picture.
  const side = await page.locator('.part.sidebar').boundingBox();
  if (side) {
    await page.mouse.move(side.x + side.width - 1, side.y + side.height / 2);
    await page.mouse.down();
    await page.mouse.move(side.x + side.width + 330, side.y + side.height / 2, { steps: 8 });
    await page.mouse.up();
  }
  await page.waitForTimeout(300); // let the list settle for the picture
  await shot('screenshot.png'); // the README's picture: the results view over the opened evidence
});

test('a search that hides evidence says so, and its action searches all conversations', async (t) => {
  await runCommand('runls: Search Agent Memory');
  await waitTitle('runls: Search Agent Memory');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('hotel booking');
  await page.keyboard.press('Enter');
  await waitMessage('"hotel booking"');
  const narrow = JSON.parse(execFileSync(RUNLS_BIN, ['search', '--json', '--interpreter', INTERPRETER, '--episode', 'episode-2', '--conversation', 'conv-1', run, 'hotel', 'booking'], { encoding: 'utf8' }));
  const n = narrow.hidden.otherConversation;
  assert.ok(n > 0, JSON.stringify(narrow.hidden));
  const sentence = evidencePane().locator('.monaco-list-row', { hasText: `${n} more in other conversations of episode-2` }).first();
  await sentence.waitFor({ timeout: TIMEOUT });
  assert.match(await sentence.innerText(), /Search all conversations/);
  await shot('hidden-sentence.png');
  await clickRow(t, sentence, (timeout) => evidencePane().locator('.message', { hasText: 'all conversations' }).first().waitFor({ timeout }), 'Search all conversations');
  const wide = cliSearch(['--interpreter', INTERPRETER, '--episode', 'episode-2', '--conversation', 'conv-1', '--all-conversations', run, 'hotel', 'booking']);
  await rowsShowing(wide);
  assert.ok(wide.some((w) => w.episode === 'episode-2' && w.conversation && !['conv-1', '-'].includes(w.conversation)), 'evidence of another conversation of episode-2');
  assert.equal(await evidencePane().locator('.monaco-list-row', { hasText: 'more in other conversations' }).count(), 0);
});

test('Search Selection or Word searches the word under the cursor', async () => {
  await openFile('episode-2/bob/bob.log');
  await goToLine(3); // 2026-10-21 18:01:02.310 ERROR [running] [conv-1] Bob migration dry-run failed
  await page.keyboard.press('End');
  await page.keyboard.press('Control+ArrowLeft'); // on "failed"
  await page.keyboard.press('Control+Alt+E');
  await waitMessage('"failed"');
  await rowsShowing(cliSearch(['--interpreter', INTERPRETER, '--episode', 'episode-2', '--conversation', 'conv-1', run, 'failed']));
  const rows = await evidenceRows();
  assert.ok(rows[0].highlights.some((h) => h.toLowerCase() === 'failed'), JSON.stringify(rows));
  await shot('search-word.png'); // rows of log records: their level's icon and colour
});

test('Search Again uses the context now shown in the status bar', async () => {
  await page.locator('.statusbar-item', { hasText: 'runls: all agents · episode-2 (scope: run) · conv-1' }).first().waitFor();
  await runCommand('runls: Search Again with Current Settings');
  await waitMessage('(all agents · episode-2 (scope: run) · conv-1)');
  assert.ok((await evidenceRows()).length >= 1);
});

test('Pick Agent narrows the search to one agent, shown in the status bar', async (t) => {
  const pickAgent = (label) =>
    pickWith(t, 'runls: Pick Agent', 'Pick the agent whose memory to search', label, () => shot(`pick-agent-${label.replace(/\W+/g, '-')}.png`));
  await pickAgent('bob');
  await page.locator('.statusbar-item', { hasText: 'runls: bob · episode-2 (scope: run) · conv-1' }).first().waitFor();
  // The Evidence shown was asked for all agents: a pick marks it (issue 27).
  await waitMessage('Stale:');
  await evidencePane().locator('.monaco-list-row', { hasText: 'Stale: asked in all agents · episode-2 (scope: run) · conv-1; the context is now bob · episode-2 (scope: run) · conv-1' }).first().waitFor({ timeout: TIMEOUT });
  await evidencePane().locator('.pane-header', { hasText: 'Evidence (stale)' }).first().waitFor({ timeout: TIMEOUT });
  await runCommand('runls: Search Again with Current Settings');
  await waitMessage('(bob · episode-2 (scope: run) · conv-1)');
  // Search Again's query is the last one: the word searched above.
  const shown = await rowsShowing(cliSearch(['--interpreter', INTERPRETER, '--agent', 'bob', '--episode', 'episode-2', '--conversation', 'conv-1', run, 'failed']));
  assert.ok(shown.length >= 1);
  for (const row of shown) assert.match(row.text, /^#\d+ episode-\d+ · bob /, row.text);
  await pickAgent('All agents');
  await page.locator('.statusbar-item', { hasText: 'runls: all agents · episode-2 (scope: run) · conv-1' }).first().waitFor();
  await waitMessage('Stale:'); // asked for bob
  assert.equal(fs.existsSync(path.join(run, '.vscode')), false, 'still no .vscode folder in the run');
});

test('Pick Scope: the scope stands beside the episode; the Evidence shown is marked stale until searched again', async (t) => {
  await runCommand('runls: Search Again with Current Settings');
  await waitMessage('(all agents · episode-2 (scope: run) · conv-1)');
  const pickScope = (label) => pickWith(t, 'runls: Pick Scope (Run or Episode)', 'Pick the scope of the searches', label);
  await pickScope('episode');
  await page.locator('.statusbar-item', { hasText: 'runls: all agents · episode-2 (scope: episode) · conv-1' }).first().waitFor();
  // The rows were asked with scope run: the view says so, and offers to ask again.
  await waitMessage('Stale:');
  const stale = evidencePane().locator('.monaco-list-row', { hasText: 'Stale: asked in all agents · episode-2 (scope: run) · conv-1' }).first();
  await stale.waitFor({ timeout: TIMEOUT });
  await shot('evidence-stale.png');
  await clickRow(t, stale, (timeout) => evidencePane().locator('.message', { hasText: '(all agents · episode-2 (scope: episode) · conv-1)' }).first().waitFor({ timeout }), 'Search again');
  // The message changes before the rows are drawn again.
  const until = Date.now() + TIMEOUT;
  while ((await evidencePane().locator('.monaco-list-row', { hasText: 'Stale:' }).count()) > 0) {
    assert.ok(Date.now() < until, 'searched again: no longer stale');
    await page.waitForTimeout(200);
  }
  const rows = await evidenceRows();
  for (const r of rows) assert.match(r.text, /^#\d+ episode-2 · /, `scope episode: ${r.text}`);
  await pickScope('run');
  await page.locator('.statusbar-item', { hasText: 'runls: all agents · episode-2 (scope: run) · conv-1' }).first().waitFor();
  await waitMessage('Stale:');
});

/** Whether the server under test has a rev-3 piece (its CLI's usage names the flag), else the reason to skip. */
function serverHas(sub, flag) {
  let usage = '';
  try {
    usage = execFileSync(RUNLS_BIN, [sub, '--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    usage = `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
  const has = usage.includes(`usage: runls ${sub}`) && usage.includes(`  ${flag} `);
  return has ? undefined : `the server has no "runls ${sub} ${flag}" yet (spec rev 3, issue 27's server side)`;
}

test('Search Before This Record: the record\'s time bounds the search, the results in time order', async (t) => {
  await openFile('episode-2/bob/bob.log');
  await goToLine(3); // 2026-10-21 18:01:02.310 ERROR [running] [conv-1] Bob migration dry-run failed
  await runCommand('runls: Search Before This Record');
  await waitTitle('Search Before This Record (up to 2026-10-21 18:01:02, episode-2 · conv-1)');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('deploy billing');
  await page.keyboard.press('Enter');
  await waitMessage('before 2026-10-21 18:01:02), in time order');
  await shot('search-before.png');
  const missing = serverHas('search', '--to');
  if (missing) return t.skip(missing);
  // The server's evidence for the request, oldest first (as the view orders it).
  const expected = cliSearch(['--interpreter', INTERPRETER, '--episode', 'episode-2', '--conversation', 'conv-1', '--to', '2026-10-21 18:01:02', run, 'deploy', 'billing']);
  assert.ok(expected.length >= 2, JSON.stringify(expected));
  const byTime = expected.map((e, i) => ({ ...e, rank: i })).sort((a, b) => (a.time ?? '9').replace(',', '.').localeCompare((b.time ?? '9').replace(',', '.')) || a.rank - b.rank);
  const shown = await rowsShowing(byTime);
  shown.forEach((row, i) => assert.ok(row.text.startsWith(`#${byTime[i].rank + 1} `), `row ${i} keeps its rank: ${row.text}`));
  for (const e of expected) assert.ok(e.time.slice(0, 19) <= '2026-10-21 18:01:02', `${e.time} is before the record`);

  // The mouse leaves the rows for the view's message: a hover left showing would stand
  // beside the one the next tests ask for.
  await evidencePane().locator('.message').first().hover();
});

test('from an Evidence row, Show Conversation of This Record shows that record\'s block selected', async (t) => {
  const missing = serverHas('search', '--to');
  if (missing) return t.skip(missing);
  // The rows of the search before the record (the test above).
  const expected = cliSearch(['--interpreter', INTERPRETER, '--episode', 'episode-2', '--conversation', 'conv-1', '--to', '2026-10-21 18:01:02', run, 'deploy', 'billing']);
  const told = expected.find((e) => e.conversation === 'conv-1' && e.text.startsWith('Deploy the billing'));
  assert.ok(told, JSON.stringify(expected));
  await evidencePane().locator('.monaco-list-row', { hasText: 'Deploy the billing' }).first().waitFor({ timeout: TIMEOUT });
  await rowMenuItem('Deploy the billing', 'Show Conversation');
  await page.locator('.tabs-container .tab.active', { hasText: 'conv-1' }).waitFor({ timeout: TIMEOUT });
  const editor = page.locator('.editor-group-container.active .monaco-editor').first();
  const head = `${told.time} · alice · conv-1`;
  await editor.locator('.view-line', { hasText: head }).first().waitFor({ timeout: TIMEOUT });
  // The record's block is selected: the selection drawn, the cursor on its header line.
  await editor.locator('.selected-text').first().waitFor({ timeout: TIMEOUT });
  const lines = await visibleLines(editor);
  const at = lines.findIndex((l) => l.startsWith(head));
  assert.ok(at >= 0, JSON.stringify(lines));
  const ln = Number(/Ln (\d+)/.exec(await page.locator('.statusbar-item', { hasText: /Ln \d+, Col/ }).first().innerText())[1]);
  const top = Number(await editor.locator('.margin-view-overlays .line-numbers').evaluateAll((els) => Math.min(...els.map((e) => Number(e.textContent.trim())).filter((n) => n > 0))));
  assert.equal(ln, top + at, `the cursor is on the record's header (line ${top + at}): ${JSON.stringify(lines)}`);
  await shot('evidence-to-conversation.png');
});

/** The pids of the runls servers running from RUNLS_BIN (the test's own build). */
function serverPids() {
  const want = fs.realpathSync(RUNLS_BIN);
  const pids = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (fs.readlinkSync(`/proc/${d}/exe`) === want) pids.push(Number(d));
    } catch {
      // not ours or gone
    }
  }
  return pids;
}

test('a server that crashes is restarted and searches work again', async () => {
  const before = serverPids();
  assert.equal(before.length, 1, `one server runs: ${before}`);
  process.kill(before[0], 'SIGKILL');
  const end = Date.now() + TIMEOUT;
  let now = [];
  while (Date.now() < end) {
    now = serverPids().filter((p) => p !== before[0]);
    if (now.length > 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(now.length, 1, 'a new server process');
  await page.locator('.statusbar-item', { hasText: 'runls: all agents · episode-2 (scope: run) · conv-1' }).first().waitFor();
  await runCommand('runls: Search Again with Current Settings');
  await waitMessage('pieces of evidence');
  assert.ok((await evidenceRows()).length >= 2);
});

test('the Problems panel shows the grouped warnings; the code opens the README section rendered', async () => {
  await page.keyboard.press('Escape');
  await page.locator('[id="status.problems"]').click(); // the status bar's problem counts open the panel
  const panel = page.locator('.markers-panel');
  await panel.waitFor({ state: 'visible' });
  const filter = page.locator('.markers-panel-action-filter input, .viewpane-filter input').first();
  // One warning a record, not one a line: the worker log's four records with lines
  // without the indent, each giving their number.
  await filter.fill('worker.log');
  const warning = page.locator('.markers-panel .monaco-list-row', { hasText: 'unindented-continuation' }).first();
  await warning.waitFor({ timeout: TIMEOUT });
  const warnings = (await problemsOf('worker.logepisode-3/carol')).filter((t) => t.includes('unindented-continuation'));
  assert.equal(warnings.length, 4, JSON.stringify(warnings));
  assert.ok(warnings[0].includes('3 continuation lines without the two-space indent'), warnings[0]);
  assert.ok(warnings[3].includes('122 continuation lines without the two-space indent'), warnings[3]);
  assert.ok(warnings[0].includes('runls'), warnings[0]);
  fs.writeFileSync(path.join(ARTIFACTS, 'problems-row.html'), await warning.evaluate((e) => e.outerHTML));
  await shot('problems.png');
  // The sample run's stack trace (episode-2/bob/bob.log: an exception line and three
  // `at` lines): a Hint naming the exception, which the Problems panel does not list
  // (spec §9 rev 3); a server before it gives a Warning, one for the four lines.
  await filter.fill('episode-2/bob');
  await page.waitForTimeout(1000);
  const bob = (await problemsOf('bob.logepisode-2/bob')).filter((t) => t.includes('unindented-continuation'));
  if (bob.length === 0) {
    // A Hint: drawn in the editor (dots under its start), not listed in the panel.
    await openFile('episode-2/bob/bob.log');
    await page.locator('.editor-group-container.active .monaco-editor .squiggly-hint').first().waitFor({ state: 'attached', timeout: TIMEOUT });
    assert.equal(await page.locator('.editor-group-container.active .monaco-editor .squiggly-warning').count(), 0, 'no warning drawn in bob.log');
    await panel.waitFor({ state: 'visible' }); // opening a file leaves the panel open
  } else {
    assert.equal(bob.length, 1, JSON.stringify(bob));
    assert.ok(bob[0].includes('4 continuation lines without the two-space indent'), bob[0]);
  }

  // A file written before 0.18.6 shows one Information, nothing to fix.
  await filter.fill('episode-1/alice/alice.history');
  const info = page.locator('.markers-panel .monaco-list-row', { hasText: 'predates the conversation field' }).first();
  await info.waitFor({ timeout: TIMEOUT });
  assert.equal(await info.locator('.codicon-info, .codicon-warning').first().evaluate((e) => e.className.includes('info')), true, 'severity Information');

  // The code links to the README's section, rendered (a command: link; a link to the
  // file would open its raw text at line 1).
  await filter.fill('worker.log');
  await warning.waitFor({ timeout: TIMEOUT });
  const link = warning.locator('a', { hasText: 'unindented-continuation' }).first();
  await link.waitFor();
  const href = (await link.getAttribute('href')) ?? (await link.getAttribute('title')) ?? '';
  assert.match(href, /^command:runls\.showWarningDocs\?/, href);
  await link.click();
  // The Markdown preview as an editor: its tab is named after the file.
  await page.locator('.tabs-container .tab.active', { hasText: /readme\.md/i }).waitFor({ timeout: TIMEOUT });
  // The preview (a webview's inner frame) is scrolled to the section's heading.
  const end = Date.now() + TIMEOUT;
  let top;
  while (Date.now() < end) {
    for (const f of page.frames()) {
      top = await f.evaluate(() => document.getElementById('unindented-continuation')?.getBoundingClientRect().top).catch(() => undefined);
      if (top !== undefined) break;
    }
    if (top !== undefined && top >= -5 && top < 200) break;
    await page.waitForTimeout(250);
  }
  await shot('warning-docs.png');
  assert.ok(top !== undefined && top >= -5 && top < 200, `the heading is at ${top}px from the preview's top`);
  await page.keyboard.press('Control+W'); // the panel stays open

  // A setting changed in VS Code reaches the server (didChangeConfiguration): with a
  // cap of 2 the worker log's four warnings show as 1 and 1 saying how many more.
  await filter.fill('worker.log');
  const settingsFile = path.join(run, '.vscode', 'settings.json');
  const hadVscode = fs.existsSync(path.join(run, '.vscode'));
  const settings = fs.existsSync(settingsFile) ? JSON.parse(fs.readFileSync(settingsFile, 'utf8')) : {};
  fs.mkdirSync(path.dirname(settingsFile), { recursive: true });
  fs.writeFileSync(settingsFile, JSON.stringify({ ...settings, 'runls.maxDiagnosticsPerFile': 2 }, null, 2));
  const until = Date.now() + TIMEOUT;
  let capped = [];
  while (Date.now() < until) {
    capped = (await problemsOf('worker.logepisode-3/carol')).filter((t) => t.includes('runls'));
    if (capped.length === 2 && /more format warnings/.test(capped[1])) break;
    await page.waitForTimeout(250);
  }
  assert.equal(capped.length, 2, JSON.stringify(capped));
  assert.match(capped[1], /3 more format warnings/, `the last warning counts the 3 left out: ${capped[1]}`);
  fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
  if (!hadVscode) fs.rmSync(path.join(run, '.vscode'), { recursive: true, force: true });
  await filter.fill('');
});

test('the Outline lists a .log file\'s records under their conversations', async () => {
  await openFile('episode-2/bob/bob.log');
  await runCommand('Explorer: Focus on Outline View');
  const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /^\s*Outline/i }) });
  await pane.locator('.monaco-list-row', { hasText: 'Bob migration dry-run failed' }).first().waitFor({ timeout: TIMEOUT });
  const outline = await pane
    .locator('.monaco-list-row[aria-level]')
    .evaluateAll((els) => els.map((e) => ({ level: Number(e.getAttribute('aria-level')), text: e.innerText.replace(/\s+/g, ' ').trim() })));
  const shown = outline;
  fs.writeFileSync(path.join(ARTIFACTS, 'outline.json'), JSON.stringify(shown, null, 1));
  await shot('outline.png');
  const conv = outline.find((r) => r.text.startsWith('conv-1'));
  assert.ok(conv, JSON.stringify(shown));
  const failed = outline.find((r) => r.text.includes('18:01:02 Bob migration dry-run failed'));
  assert.ok(failed, JSON.stringify(shown));
  assert.ok(failed.level === conv.level + 1, `a record is one level below its conversation: ${JSON.stringify(outline)}`);
  assert.ok(failed.text.includes('ERROR · running'), failed.text);
  // Records of conv-1 in file order, each under it (the pane shows what fits).
  const under = [];
  for (const r of outline.slice(outline.indexOf(conv) + 1)) {
    if (r.level <= conv.level) break;
    if (r.level === conv.level + 1) under.push(r.text.slice(0, 8));
  }
  const all = ['18:01:00', '18:01:02', '18:05:59', '18:06:01'];
  assert.ok(under.length >= 3, JSON.stringify(outline));
  assert.deepEqual(under, all.slice(0, under.length), JSON.stringify(outline));
  assert.equal(outline[0].text, '-', 'the first run is the record outside any conversation');
});

test('on a continuation line the breadcrumbs and sticky scroll show the record\'s header', async () => {
  await openFile(WORKER_LOG);
  // Deep inside the 120-line stack trace: the record's first line is out of view.
  await goToLine(LONG_RECORD_LINE + 100);
  const crumbs = page.locator('.breadcrumbs-control .monaco-breadcrumb-item');
  const end = Date.now() + TIMEOUT;
  let texts = [];
  while (Date.now() < end) {
    texts = await crumbs.evaluateAll((els) => els.map((e) => e.innerText.trim()));
    if (texts.some((t) => t.includes('Carol the long job failed'))) break;
    await page.waitForTimeout(250);
  }
  assert.ok(texts.includes('conv-6'), JSON.stringify(texts));
  assert.ok(texts.some((t) => t.includes('10:05:00 Carol the long job failed')), JSON.stringify(texts));
  const sticky = page.locator('.sticky-widget');
  await sticky.locator('.sticky-line-content', { hasText: 'Carol the long job failed' }).first().waitFor({ timeout: TIMEOUT });
  const pinned = (await sticky.innerText()).replace(/\s+/g, ' ');
  assert.ok(pinned.includes('10:05:00.000 ERROR [running] [conv-6] Carol the long job failed'), pinned);
  await shot('sticky-scroll.png');
});

test('hover on a record shows its conversation and whether it is evidence', async () => {
  await openFile('episode-2/bob/bob.log');
  await goToLine(3); // 2026-10-21 18:01:02.310 ERROR [running] [conv-1] Bob migration dry-run failed
  await runCommand('Show or Focus Hover');
  const hover = page.locator('.monaco-hover:not(.hidden) .hover-contents, .monaco-hover .markdown-hover').first();
  await hover.waitFor({ state: 'visible', timeout: TIMEOUT });
  const end = Date.now() + TIMEOUT;
  let text = '';
  while (Date.now() < end) {
    text = (await page.locator('.monaco-hover').allInnerTexts()).join('\n');
    if (text.includes('evidence:')) break;
    await page.waitForTimeout(200);
  }
  await shot('hover.png');
  assert.ok(text.includes('conversation conv-1'), text);
  assert.ok(text.includes('evidence: yes'), `episode-2 and conv-1 are set, so the ERROR record is evidence: ${text}`);
  assert.ok(text.includes('ERROR'), text);
  await page.keyboard.press('Escape');
});

test('a .log file of the run opens as runls Log with its warnings underlined', async () => {
  await openFile(WORKER_LOG);
  await page.locator('.statusbar-item', { hasText: 'runls Log' }).first().waitFor();
  await page.locator('.monaco-editor .squiggly-warning').first().waitFor();
  await shot('log-file.png');
});

test('Go to Symbol in Workspace keeps the server order for a +-joined query', async () => {
  await quickInput('#hotel+booking', 'hotel+booking #', TIMEOUT);
  const shown = (await rows()).sort((a, b) => a.index - b.index);
  const ranks = shown.map((row) => Number(/hotel\+booking #(\d+)/.exec(row.text)?.[1]));
  assert.ok(ranks.length >= 2, JSON.stringify(shown));
  assert.deepEqual(ranks, ranks.map((_, i) => i + 1), `VS Code shows the server's order: ${JSON.stringify(shown.map((s) => s.text))}`);
  assert.match(shown[0].text.toLowerCase(), /hotel.*booking|booking.*hotel/);
  await shot('workspace-symbols.png');
  await page.keyboard.press('Escape');
});

function cliRecords(args) {
  return JSON.parse(execFileSync(RUNLS_BIN, ['records', '--json', '--limit', '10000', ...args], { encoding: 'utf8' })).records;
}

/** The header of a record's block in the conversation document (src/conversation.ts). */
function blockHeader(r) {
  return [r.time, r.agent, ...(r.level ? [r.level] : []), r.conversation].join(' · ');
}

/** The lines an editor shows, top to bottom (Monaco keeps its line elements in no order). */
async function visibleLines(editor) {
  const shown = await editor.locator('.view-lines .view-line').evaluateAll((els) =>
    els.map((e) => ({ top: parseFloat(e.style.top), text: e.textContent.replace(/\u00a0/g, ' ') })),
  );
  return shown.sort((a, b) => a.top - b.top).map((l) => l.text);
}

/** Waits until the status bar shows the cursor on a 1-based line. */
async function waitLine(line) {
  await page.locator('.statusbar-item', { hasText: `Ln ${line},` }).first().waitFor({ timeout: TIMEOUT });
}

test('Show Conversation: the picks describe each conversation; the document lists its records in time order; Enter and Ctrl+click open a record in its file', async () => {
  const expected = cliRecords(['--conversation', 'conv-1', run, 'episode-2']);
  assert.ok(expected.length >= 3, JSON.stringify(expected));
  await runCommand('runls: Show Conversation');
  await waitTitle('pick the episode');
  await page.keyboard.type('episode-2');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'episode-2' }).first().waitFor();
  await page.keyboard.press('Enter');
  await waitTitle('pick the conversation (of episode-2)');
  const picks = await rows();
  const conv1 = picks.find((p) => p.text.includes('conv-1'));
  assert.ok(conv1, JSON.stringify(picks));
  const agents = [...new Set(expected.map((r) => r.agent))].sort().join(', ');
  assert.ok(conv1.text.includes(`${agents} · ${expected.length} records · ${expected[0].time}`), conv1.text);
  // Its first told or said line (the e2e's interpreter has told and said rules).
  assert.ok(conv1.text.includes('told: Deploy the billing service'), conv1.text);
  await shot('conversation-picks.png');
  await page.keyboard.type('conv-1');
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: 'conv-1' }).waitFor({ timeout: TIMEOUT });
  const editor = page.locator('.editor-group-container.active .monaco-editor').first();
  await editor.locator('.view-line', { hasText: blockHeader(expected[0]) }).first().waitFor({ timeout: TIMEOUT });
  const lines = await visibleLines(editor);
  assert.match(lines[0], new RegExp(`runls: episode-2 · conv-1 · ${expected.length} records`), lines[0]);
  assert.equal(lines[2], blockHeader(expected[0]), 'the first block is the first record');
  assert.equal(lines[3], `  ${expected[0].text.split('\n')[0]}`);
  await shot('conversation.png');

  // Enter on the first block opens its record's line in the agent's file.
  await goToLine(3);
  await page.keyboard.press('Enter');
  const file = path.basename(fileURLToPath(expected[0].location.uri));
  await page.locator('.tabs-container .tab.active', { hasText: file }).waitFor({ timeout: TIMEOUT });
  await waitLine(expected[0].location.range.start.line + 1);

  // Ctrl+click on the second block's header: its link lands on its record's line.
  await page.locator('.tabs-container .tab', { hasText: 'conv-1' }).first().click();
  const second = editor.locator('.view-line', { hasText: blockHeader(expected[1]) }).first();
  await second.waitFor({ timeout: TIMEOUT });
  const link = second.locator('.detected-link').first();
  await link.waitFor({ timeout: TIMEOUT });
  const box = await link.boundingBox();
  assert.ok(box, 'the link is drawn');
  await page.mouse.move(box.x + 20, box.y + box.height / 2);
  await page.keyboard.down('Control');
  await page.mouse.click(box.x + 20, box.y + box.height / 2);
  await page.keyboard.up('Control');
  const file2 = path.basename(fileURLToPath(expected[1].location.uri));
  await page.locator('.tabs-container .tab.active', { hasText: file2 }).waitFor({ timeout: TIMEOUT });
  await waitLine(expected[1].location.range.start.line + 1);
});

/** The highest line number the active editor shows (its last visible line, 1-based). */
async function lastVisibleLine() {
  const nums = await page
    .locator('.editor-group-container.active .monaco-editor .margin-view-overlays .line-numbers')
    .evaluateAll((els) => els.map((e) => Number(e.textContent.trim())).filter((n) => n > 0));
  return Math.max(0, ...nums);
}

async function waitLastVisible(want, what) {
  const end = Date.now() + TIMEOUT;
  let got = 0;
  while (Date.now() < end) {
    got = await lastVisibleLine();
    if (got === want) return;
    await page.waitForTimeout(200);
  }
  assert.fail(`${what}: the last visible line is ${got}, want ${want}`);
}

test('Follow File: the editor stays at the end as the file grows, pauses when scrolled up, resumes on the command', async () => {
  const rel = 'episode-3/carol/follow.log';
  const file = path.join(run, rel);
  const line = (i) => `2026-10-22 11:00:${String(i % 60).padStart(2, '0')}.000 INFO  [running] [conv-5] Carol follow line ${i}\n`;
  fs.writeFileSync(file, line(0));
  await openFile(rel);
  await runCommand('runls: Follow File');
  await page.locator('.statusbar-item', { hasText: 'runls: following' }).first().waitFor({ timeout: TIMEOUT });
  let n = 1;
  const append = (count) => {
    let text = '';
    for (let i = 0; i < count; i++) text += line(n++);
    fs.appendFileSync(file, text);
  };
  append(120);
  // The file's last line is its line n (the last line end leaves an empty line n+1).
  await waitLastVisible(n + 1, 'after appends');
  await shot('follow.png');

  // Scrolled to the top: following pauses; appends leave the view where it is.
  await page.keyboard.press('Control+Home');
  await page.locator('.statusbar-item', { hasText: 'runls: follow paused' }).first().waitFor({ timeout: TIMEOUT });
  append(30);
  await page.locator('.editor-group-container.active .view-line', { hasText: `Carol follow line ${n - 1}` }).first().waitFor({ state: 'attached', timeout: TIMEOUT }).catch(() => undefined);
  await page.waitForTimeout(1500);
  assert.ok((await lastVisibleLine()) < 60, 'the view stayed at the top while paused');

  // The command resumes: the end again, and appends follow.
  await runCommand('runls: Follow File');
  await waitLastVisible(n + 1, 'resumed');
  append(10);
  await waitLastVisible(n + 1, 'after appends, resumed');
});

// --- answers while the run is indexed (issue 33) ---------------------------------

/** The results view's message, as shown. */
async function viewMessage() {
  return (await evidencePane().locator('.message').first().innerText().catch(() => '')).replace(/\s+/g, ' ').trim();
}

test('partial: a search while the run is indexed shows as partial, and is searched again when indexing ends', async (t) => {
  const HOLD = process.env.RUNLS_HOLD_BIN;
  if (!HOLD) return t.skip('RUNLS_HOLD_BIN unset: no runls built with -tags runls_holdindex');
  // A copy of the sample run served by the holding server, with the context in its
  // folder settings (no picker: the pickers would list only the part indexed).
  const dir = path.join(work, 'partial-run');
  fs.cpSync(SAMPLE, dir, { recursive: true });
  fs.mkdirSync(path.join(dir, '.vscode'));
  fs.writeFileSync(path.join(dir, '.vscode', 'settings.json'), JSON.stringify({ 'runls.server.path': HOLD, 'runls.episode': 'episode-2', 'runls.conversation': 'conv-1' }));
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dir)}`);
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
  await page.locator('.statusbar-item', { hasText: 'runls: indexing' }).first().waitFor({ timeout: 90_000 });
  await runCommand('runls: Search Agent Memory');
  await waitTitle('runls: Search Agent Memory');
  await page.keyboard.press('Control+A');
  await page.keyboard.type(QUERY);
  await page.keyboard.press('Enter');
  await waitMessage('Partial (');
  assert.match(await viewMessage(), /^Partial \(\d+% indexed\): "deploy database migration": \d+ pieces? of evidence/);
  await evidencePane().locator('.pane-header', { hasText: 'Evidence (partial)' }).first().waitFor({ timeout: TIMEOUT });
  await evidencePane().locator('.monaco-list-row', { hasText: 'searched again when indexing ends' }).first().waitFor({ timeout: TIMEOUT });
  // No notice that the part indexed cannot judge (episode-2's records are not in yet).
  assert.equal(await evidencePane().locator('.monaco-list-row', { hasText: 'was written in conversation' }).count(), 0, 'no conversation notice in a partial answer');
  await shot('evidence-partial.png');

  // The rest arrives: the view is searched again on its own, whole.
  fs.writeFileSync(path.join(work, 'release-partial'), '');
  const end = Date.now() + 2 * TIMEOUT;
  let msg = await viewMessage();
  while (msg.startsWith('Partial') || !msg.includes(`"${QUERY}"`)) {
    assert.ok(Date.now() < end, `still partial after the release: ${msg}`);
    await page.waitForTimeout(200);
    msg = await viewMessage();
  }
  await page.locator('.statusbar-item', { hasText: 'runls: all agents · episode-2 (scope: run) · conv-1' }).first().waitFor({ timeout: TIMEOUT });
  const expected = cliSearch(['--interpreter', INTERPRETER, '--episode', 'episode-2', '--conversation', 'conv-1', '--top-k', '5', dir, QUERY]);
  await rowsShowing(expected);
  assert.equal(await evidencePane().locator('.monaco-list-row', { hasText: 'searched again when indexing ends' }).count(), 0, 'no partial sentence left');
  assert.equal(await evidencePane().locator('.pane-header', { hasText: 'partial' }).count(), 0, 'the title no longer says partial');
  await shot('evidence-partial-whole.png');
});

// --- a generated run: from a failure to its story ------------------------------

let gen;

function genRun() {
  if (gen) return gen;
  const dir = path.join(work, 'gen-run');
  const args = ['-size', GEN.size, '-seed', GEN.seed, '-episodes', GEN.episodes, '-agents', GEN.agents, '-out', dir];
  if (process.env.RUNLS_RUNGEN) execFileSync(process.env.RUNLS_RUNGEN, args, { stdio: 'pipe' });
  else execFileSync('go', ['run', './internal/rungen/cmd/rungen', ...args], { cwd: repoRoot, stdio: 'pipe' });
  // The server named in the folder's settings too, as the partial test does: in two of
  // four runs of the twelfth session (2026-12-07) the window opened on this folder read
  // the User setting runls.server.path (machine-overridable) as empty and said the
  // server was not found (the status "runls: error"), where the window before it had
  // read it. Why is not known: not reproduced since (the e2e 4 times without this folder
  // setting, and 18 windows opened in turn on three folders: each read the User value at
  // activation). openFolder keeps the window's runls log if it recurs: on a miss it
  // names where the setting was read from (user, workspace, folder).
  fs.mkdirSync(path.join(dir, '.vscode'), { recursive: true });
  fs.writeFileSync(path.join(dir, '.vscode', 'settings.json'), JSON.stringify({ 'runls.server.path': RUNLS_BIN }));
  gen = dir;
  return dir;
}

/** Opens another folder in the same code-server page: a new window on it, the extension started for it. */
async function openFolder(dir) {
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dir)}`);
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
  try {
    await page.locator('.statusbar-item', { hasText: 'runls: all agents' }).first().waitFor({ timeout: 90_000 });
  } catch (e) {
    // Once in a clean-clone CI the generated run's status never said ready (three
    // tests lost; an immediate rerun passed): leave what the status bar said and a
    // screenshot for the next one.
    // The window's runls log says where runls.server.path was read from on a miss.
    const status = await page.locator('.statusbar-item', { hasText: 'runls' }).allInnerTexts().catch(() => []);
    await shot('open-folder-not-ready.png');
    const log = runlsLogs().sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
    if (log) fs.copyFileSync(log, path.join(ARTIFACTS, 'open-folder-not-ready.runls.log'));
    const tail = log ? fs.readFileSync(log, 'utf8').split('\n').slice(0, 6).join('\n') : '(no runls log)';
    throw new Error(`${path.basename(dir)}: the status bar never said "runls: all agents"; it said ${JSON.stringify(status)}: ${e.message}\nits runls log begins:\n${tail}`);
  }
}

/** The 1-based line of record i's header in a conversation document loaded from its first record (conversation.ts's layout). */
function fromStartLine(records, i) {
  const ms = (t) => (t ? Date.parse(t.replace(' ', 'T').replace(',', '.') + 'Z') : undefined);
  let line = 3; // the summary, a blank line, then the first header
  let prev;
  for (let k = 0; k < i; k++) {
    const next = ms(records[k + 1].time);
    const t = ms(records[k].time);
    if (t !== undefined) prev = t;
    line += 1 + records[k].text.split('\n').length;
    if (prev !== undefined && next !== undefined && next - prev >= 60_000) line++; // the gap line
  }
  return line;
}

/** The active editor's lines in view, top to bottom. */
async function activeLines() {
  return visibleLines(page.locator('.editor-group-container.active .monaco-editor').first());
}

test('generated run: Show Conversation of This Record opens at the ERROR record, its block selected; scrolling up loads what came before', async (t) => {
  const dir = genRun();
  const lines = fs.readFileSync(path.join(dir, GEN.file), 'utf8').split('\n');
  const m = /^(\S+ \S+) ERROR \[[^\]]+\] \[([^\]]+)\] /.exec(lines[GEN.line - 1]);
  assert.ok(m, `line ${GEN.line} of ${GEN.file} is an ERROR record (rungen changed? pick another seed): ${lines[GEN.line - 1]}`);
  const [, time, conv] = m;
  const all = cliRecords(['--conversation', conv, dir, 'episode-2']);
  const at = all.findIndex((r) => r.time === time && r.location.range.start.line === GEN.line - 1);
  assert.ok(at > PAGE_SIZE, `the record (index ${at}) is past the first page of ${PAGE_SIZE}`);
  await openFolder(dir);
  await openFile(GEN.file);
  await goToLine(GEN.line);
  await runCommand('runls: Show Conversation of This Record');
  await page.locator('.tabs-container .tab.active', { hasText: conv }).waitFor({ timeout: TIMEOUT });
  const editor = page.locator('.editor-group-container.active .monaco-editor').first();
  const head = blockHeader(all[at]);
  await editor.locator('.view-line', { hasText: head }).first().waitFor({ timeout: TIMEOUT });
  // The block is selected: the cursor on its header, the selection drawn over it.
  await editor.locator('.selected-text').first().waitFor({ timeout: TIMEOUT });
  let shown = await activeLines();
  const h = shown.indexOf(head);
  assert.ok(h > 0, `the record's header is in view, not at the top: ${JSON.stringify(shown)}`);
  assert.ok(shown.slice(0, h).includes(blockHeader(all[at - 1])), `the record before it is in view above it: ${JSON.stringify(shown)}`);
  await shot('conversation-at-record.png');
  const noAt = serverHas('records', '--at');
  if (!noAt) {
    // Opened at the record: the records before its page are not loaded, so its header
    // is above the line it would have in a document loaded from the start.
    const lineOf = await page.locator('.statusbar-item', { hasText: /Ln \d+, Col/ }).first().innerText();
    const ln = Number(/Ln (\d+)/.exec(lineOf)[1]);
    assert.ok(ln < fromStartLine(all, at), `the header on line ${ln}, before ${fromStartLine(all, at)} (the line it has loaded from the start)`);
  }

  // Scrolling up: the pages before load above, the view stays on what it showed,
  // until the conversation's first record.
  const end = Date.now() + 2 * TIMEOUT;
  for (;;) {
    await page.keyboard.press('Control+Home');
    await page.waitForTimeout(500);
    shown = await activeLines();
    if (shown.includes(blockHeader(all[0])) && !shown.join('\n').includes('earlier records: scroll up')) break;
    assert.ok(Date.now() < end, `scrolling up did not reach the first record: ${JSON.stringify(shown)}`);
  }
  assert.match(shown[0], new RegExp(`^runls: episode-2 · ${conv} · \\d+\\+? records`), shown[0]);
  await shot('conversation-scrolled-up.png');
  // The document's language: its Outline lists the records (time, agent, text).
  await runCommand('Explorer: Focus on Outline View');
  const outline = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /^\s*Outline/i }) });
  const first = `${all[0].time.slice(11, 19)} ${all[0].agent}: ${all[0].text.split('\n')[0].replace(/\s+/g, ' ').slice(0, 30)}`;
  await outline.locator('.monaco-list-row', { hasText: first }).first().waitFor({ timeout: TIMEOUT });
  await page.locator('.statusbar-item', { hasText: 'runls Conversation' }).first().waitFor({ timeout: TIMEOUT });
  await shot('conversation-outline.png');
  await runCommand('View: Show Explorer');
  if (noAt) t.diagnostic(`opened from the start, not at the record: ${noAt}`);
});

test('generated run: a conversation filtered to ERROR lists only ERROR records, in a tab titled with the filter', async (t) => {
  // Back on the ERROR record: its conversation, already open and holding it, selects it.
  await page.locator('.tabs-container .tab', { hasText: 'bob.log' }).first().click();
  await goToLine(GEN.line);
  await runCommand('runls: Show Conversation of This Record');
  const head = /^(\S+ \S+) ERROR/.exec(fs.readFileSync(path.join(gen, GEN.file), 'utf8').split('\n')[GEN.line - 1])[1];
  await page.locator('.editor-group-container.active .monaco-editor .view-line', { hasText: `${head} · bob · ERROR` }).first().waitFor({ timeout: TIMEOUT });
  await page.locator('.editor-group-container.active .monaco-editor .selected-text').first().waitFor({ timeout: TIMEOUT });
  await runCommand('runls: Filter Conversation (Minimum Level, Time Window)');
  await waitTitle('Filter: minimum level');
  await page.keyboard.type('ERROR');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'ERROR and above' }).first().waitFor();
  await page.keyboard.press('Enter');
  await waitTitle('Filter: agent');
  await page.keyboard.press('Enter'); // All agents
  await waitTitle('Filter: time window');
  const offered = (await rows()).map((r) => r.text);
  assert.ok(offered.some((r) => r.startsWith('Up to this record')), `windows from the record: ${JSON.stringify(offered)}`);
  await page.keyboard.press('Enter'); // Whole conversation
  await page.locator('.tabs-container .tab.active', { hasText: '(ERROR+)' }).waitFor({ timeout: TIMEOUT });
  const editor = page.locator('.editor-group-container.active .monaco-editor').first();
  await editor.locator('.view-line', { hasText: ' · ERROR · ' }).first().waitFor({ timeout: TIMEOUT });
  const shown = await activeLines();
  await shot('conversation-error-only.png');
  const headers = shown.filter((l) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\S* · /.test(l));
  assert.ok(headers.length >= 1, JSON.stringify(shown));
  const missing = serverHas('records', '--at'); // minLevel without levels came with rev 3, as --at did
  if (missing) return t.skip(`${missing}: history records (no level) are still listed`);
  for (const l of headers) assert.match(l, / · ERROR · /, `only ERROR records: ${JSON.stringify(headers)}`);
});

test('generated run: the Failures view lists the failure groups with the counts runls failures gives', async (t) => {
  const missing = serverHas('failures', '--min-level');
  if (missing) return t.skip(missing);
  const expected = JSON.parse(execFileSync(RUNLS_BIN, ['failures', '--json', gen], { encoding: 'utf8' })).groups;
  assert.ok(expected.length >= 2, JSON.stringify(expected).slice(0, 500));
  await runCommand('runls: Refresh Failures');
  const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /Failures/i }) }).first();
  await pane.locator('.message', { hasText: `${expected.length} group` }).first().waitFor({ timeout: TIMEOUT });
  await pane.locator('.monaco-list-row').first().waitFor({ timeout: TIMEOUT });
  const shown = await pane.locator('.monaco-list-row').evaluateAll((els) =>
    els.map((e) => ({ index: Number(e.getAttribute('data-index')), text: e.innerText.replace(/\s+/g, ' ').trim() })).sort((a, b) => a.index - b.index),
  );
  await shot('failures.png');
  assert.ok(shown.length >= Math.min(5, expected.length), JSON.stringify(shown));
  shown.slice(0, 5).forEach((row, i) => {
    assert.ok(row.text.startsWith(`${expected[i].count}× `), `group ${i}: ${row.text} (want count ${expected[i].count})`);
    assert.ok(row.text.includes(expected[i].pattern.replace(/\s+/g, ' ').slice(0, 30)), `group ${i}: ${row.text} (want ${expected[i].pattern})`);
  });
  // The groups come without their records; expanding one fetches them: its first record
  // is the first of runls failures --json's.
  const first = expected[0].records[0];
  const file = decodeURIComponent(new URL(first.uri).pathname);
  const rel = file.slice(file.lastIndexOf(`/${path.basename(gen)}/`) + path.basename(gen).length + 2);
  const want = `${rel}:${first.range.start.line + 1}`;
  await pane.locator('.monaco-list-row[data-index="0"]').first().click();
  await pane.locator('.monaco-list-row', { hasText: want }).first().waitFor({ timeout: TIMEOUT });
  const records = await pane.locator('.monaco-list-row').evaluateAll((els) => els.map((e) => e.innerText.trim()));
  await shot('failures-expanded.png');
  assert.ok(records.length >= 1 + Math.min(expected[0].records.length, 3), JSON.stringify(records));
});

test('a server binary that is not found: its Open Settings button lands on runls.server.path, not on "No Settings Found"', async () => {
  // Set in the open folder's settings, as the e2e's cap test does (the window reads it at once).
  const dir = path.join(gen, '.vscode');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ 'runls.server.path': path.join(work, 'no-such-runls') }));
  try {
    const toast = page.locator('.notification-toast', { hasText: 'no-such-runls' }).first();
    await toast.waitFor({ timeout: 60_000 });
    await shot('server-not-found.png');
    await toast.locator('.monaco-button', { hasText: 'Open Settings' }).first().click();
    const editor = page.locator('.settings-editor').first();
    await editor.waitFor({ timeout: TIMEOUT });
    await editor.locator('.setting-item-contents', { hasText: 'Server: Path' }).first().waitFor({ timeout: TIMEOUT });
    await shot('server-path-setting.png');
    assert.equal(await editor.locator('.no-results-message', { hasText: 'No Settings Found' }).filter({ visible: true }).count(), 0, 'not "No Settings Found"');
  } finally {
    fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ 'runls.server.path': RUNLS_BIN })); // genRun's
  }
});

/** The runls log files of the extension hosts code-server started so far. */
function runlsLogs() {
  const logs = path.join(work, 'user-data', 'logs');
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'runls.log') out.push(p);
    }
  };
  if (fs.existsSync(logs)) walk(logs);
  return out;
}

test('a server that is not there when the window opens but is a moment later: the second look starts it, no error stays', async () => {
  // The generated run's window opened anew with its folder naming a server not built
  // yet; the binary appears once the extension has looked for it and missed (its log
  // says so). No configuration changes: only the second look can find it.
  const dir = genRun();
  const late = path.join(work, 'late-runls');
  const settings = path.join(dir, '.vscode', 'settings.json');
  fs.writeFileSync(settings, JSON.stringify({ 'runls.server.path': late }));
  const before = new Set(runlsLogs());
  try {
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dir)}`);
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
    const end = Date.now() + 90_000;
    let log;
    for (;;) {
      log = runlsLogs().find((f) => !before.has(f) && fs.readFileSync(f, 'utf8').includes('late-runls'));
      if (log) break;
      assert.ok(Date.now() < end, 'the new window\'s extension never looked for late-runls');
      await new Promise((r) => setTimeout(r, 50));
    }
    fs.copyFileSync(RUNLS_BIN, late);
    fs.chmodSync(late, 0o755);
    await page.locator('.statusbar-item', { hasText: 'runls: all agents' }).first().waitFor({ timeout: 60_000 });
    const text = fs.readFileSync(log, 'utf8');
    assert.match(text, /late-runls" is not an executable file .* Reading the settings again/);
    // The miss names where the setting was read from, and the other user settings seen.
    assert.ok(text.includes(`runls.server.path in this window: user ${JSON.stringify(RUNLS_BIN)}, workspace ${JSON.stringify(late)}`), text.slice(0, 1000));
    assert.match(text, /other settings with a user value: [^)]*runls\.conversation\.pageSize/);
    assert.match(text, /server: \S*late-runls \(from setting\)/);
    assert.equal(await page.locator('.notification-toast', { hasText: 'late-runls' }).count(), 0, 'no not-found toast');
  } finally {
    fs.writeFileSync(settings, JSON.stringify({ 'runls.server.path': RUNLS_BIN })); // genRun's
  }
});
