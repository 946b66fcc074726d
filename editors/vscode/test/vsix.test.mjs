// Checks the packaged .vsix: only what runs is inside, and the manifest is right.
// Reads the zip's central directory itself, so it needs no unzip tool.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as zlib from 'node:zlib';

const extRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const VSIX = process.env.VSIX ?? path.join(extRoot, 'runls.vsix');

/** The entries of a zip file: name -> () => contents. */
function readZip(file) {
  const buf = fs.readFileSync(file);
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65557); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  assert.ok(eocd >= 0, 'a zip file');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries = new Map();
  for (let n = 0; n < count; n++) {
    assert.equal(buf.readUInt32LE(p), 0x02014b50, 'central directory entry');
    const method = buf.readUInt16LE(p + 10);
    const csize = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
    entries.set(name, () => {
      const lnameLen = buf.readUInt16LE(local + 26);
      const lextraLen = buf.readUInt16LE(local + 28);
      const data = buf.subarray(local + 30 + lnameLen + lextraLen, local + 30 + lnameLen + lextraLen + csize);
      return method === 8 ? zlib.inflateRawSync(data) : data;
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

const zip = readZip(VSIX);
const names = [...zip.keys()].sort();
const manifest = JSON.parse(zip.get('extension/package.json')().toString('utf8'));

test('only what runs is packaged: no node_modules, no sources, no source maps, no tests', () => {
  const allowed = [
    /^\[Content_Types\]\.xml$/,
    /^extension\.vsixmanifest$/,
    /^extension\/package\.json$/,
    /^extension\/readme\.md$/,
    /^extension\/dist\/extension\.js$/,
    /^extension\/language-configuration\.json$/,
    /^extension\/syntaxes\/runls-(history|log|conversation)\.tmLanguage\.json$/,
    /^extension\/docs\/[\w-]+\.png$/,
    /^extension\/media\/runls\.svg$/, // the results view's icon
  ];
  for (const n of names) assert.ok(allowed.some((re) => re.test(n)), `unexpected file in the .vsix: ${n}`);
  for (const n of ['extension/package.json', 'extension/dist/extension.js', 'extension/readme.md',
    'extension/syntaxes/runls-history.tmLanguage.json', 'extension/syntaxes/runls-log.tmLanguage.json']) {
    assert.ok(names.includes(n), `missing ${n}`);
  }
});

test('the bundle holds the language client and requires nothing but vscode and Node built-ins', () => {
  const js = zip.get('extension/dist/extension.js')().toString('utf8');
  const required = new Set([...js.matchAll(/require\(["']([^"']+)["']\)/g)].map((m) => m[1]));
  const builtins = new Set(['vscode', ...builtinModules]);
  for (const r of required) assert.ok(builtins.has(r) || r.startsWith('node:'), `bundle requires ${r}`);
  assert.match(js, /window\/workDoneProgress\/create/, 'vscode-languageclient is bundled');
  assert.doesNotMatch(js, /sourceMappingURL/);
});

test('manifest: entry point, engine, activation, commands, settings, languages and grammars', () => {
  assert.equal(manifest.main, './dist/extension.js');
  assert.equal(manifest.engines.vscode, '^1.91.0');
  assert.ok(manifest.activationEvents.includes('workspaceContains:episode-*/**'));
  const commands = manifest.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual(commands, ['runls.filterConversation', 'runls.filterFailures', 'runls.followFile', 'runls.loadEarlierRecords', 'runls.loadMoreRecords',
    'runls.nextEvidence', 'runls.openRecord', 'runls.pickAgent', 'runls.pickContext', 'runls.pickConversation', 'runls.pickEpisode',
    'runls.pickScope', 'runls.previousEvidence', 'runls.refreshFailures', 'runls.restartServer', 'runls.search', 'runls.searchAgain',
    'runls.searchBefore', 'runls.searchSelection', 'runls.showConversation', 'runls.showConversationAt', 'runls.showFailureConversation',
    'runls.showOutput', 'runls.sortEvidenceByRank', 'runls.sortEvidenceByTime']);
  // The results and failures views, the results' keys (F4 / Shift+F4 as the Search view's) and the editor's context menu.
  assert.deepEqual(manifest.contributes.views.runls.map((v) => v.id), ['runls.results', 'runls.failures']);
  assert.ok(manifest.contributes.menus['editor/context'].some((m) => m.command === 'runls.searchBefore'));
  assert.ok(zip.has(`extension/${manifest.contributes.viewsContainers.activitybar[0].icon}`), 'the view icon is packaged');
  const keys = Object.fromEntries(manifest.contributes.keybindings.map((k) => [k.command, k.key]));
  assert.deepEqual([keys['runls.nextEvidence'], keys['runls.previousEvidence']], ['f4', 'shift+f4']);
  assert.ok(manifest.contributes.menus['editor/context'].some((m) => m.command === 'runls.searchSelection'));
  // Show Conversation from a record line and from an Evidence row; Enter in a conversation opens the record.
  assert.ok(manifest.contributes.menus['editor/context'].some((m) => m.command === 'runls.showConversationAt'));
  assert.ok(manifest.contributes.menus['view/item/context'].some((m) => m.command === 'runls.showConversation' && m.when.includes('viewItem == evidence')));
  assert.equal(keys['runls.openRecord'], 'enter');
  const titles = manifest.contributes.commands.map((c) => `${c.category}: ${c.title}`);
  for (const t of ['runls: Search Agent Memory', 'runls: Search Again with Current Settings', 'runls: Next Evidence', 'runls: Previous Evidence',
    'runls: Search Selection or Word in Agent Memory', 'runls: Restart Server', 'runls: Show Output', 'runls: Show Conversation', 'runls: Follow File']) {
    assert.ok(titles.includes(t), t);
  }
  const settings = Object.keys(manifest.contributes.configuration.properties).sort();
  assert.deepEqual(settings, ['runls.agent', 'runls.conversation', 'runls.episode', 'runls.interpreter', 'runls.masking',
    'runls.conversation.pageSize', 'runls.ignoreDiagnostics', 'runls.maxDiagnosticsPerFile', 'runls.saveContextIn', 'runls.scope', 'runls.server.path', 'runls.topK',
    'runls.trace.server'].sort());
  const langs = Object.fromEntries(manifest.contributes.languages.map((l) => [l.id, l]));
  assert.deepEqual(langs['runls-history'].extensions, ['.history']);
  assert.deepEqual(langs['runls-log'].filenamePatterns, ['**/episode-*/**/*.log']);
  // The conversation document's language comes from its first line (it has no file name).
  assert.ok(new RegExp(langs['runls-conversation'].firstLine).test('runls: episode-2 · conv-1 · 14 records · all levels'));
  for (const g of manifest.contributes.grammars) {
    const file = `extension/${g.path.replace(/^\.\//, '')}`;
    assert.ok(zip.has(file), `grammar ${file} packaged`);
    assert.equal(JSON.parse(zip.get(file)().toString('utf8')).scopeName, g.scopeName);
  }
  assert.equal(manifest.dependencies?.['vscode-languageclient'] !== undefined, true);
});
