import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { agentPicks, conversationPicks, episodePicks } from '../../src/context';
import { docsCommandUri, docsFragment } from '../../src/diagnosticsLinks';
import type { RunInfo } from '../../src/protocol';
import { RestartPolicy } from '../../src/restartPolicy';
import { arrangeSymbols, pieceText } from '../../src/symbols';

const info: RunInfo = {
  root: 'file:///r',
  agents: ['alice', 'bob'],
  episodes: [
    { episode: 'episode-1', agents: ['alice', 'bob'], conversations: [] },
    { episode: 'episode-2', agents: ['alice'], conversations: ['conv-1', 'conv-2'] },
    { episode: 'episode-3', agents: [], conversations: [] },
  ],
  indexing: { done: true, files: 3, bytes: 100 },
};

test('agent picks: all agents, then each agent with its episodes; the current one first', () => {
  const picks = agentPicks(info, 'bob');
  assert.deepEqual(picks.map((p) => p.value), ['bob', '', 'alice']);
  assert.equal(picks[0].description, 'episode-1 · current');
  assert.equal(picks[2].description, 'episode-1, episode-2');
});

test('episode picks in the server order with their agents and conversations', () => {
  const picks = episodePicks(info, '');
  assert.deepEqual(picks.map((p) => p.value), ['episode-1', 'episode-2', 'episode-3', '']);
  assert.equal(picks[1].description, 'alice · 2 conversations');
  assert.equal(picks[2].description, 'no agents · no conversations');
  assert.equal(picks[3].description, 'record files give no evidence · current');
  assert.deepEqual(episodePicks(info, 'episode-2').map((p) => p.value), ['episode-2', 'episode-1', 'episode-3', '']);
});

test('conversation picks are those of the chosen episode', () => {
  assert.deepEqual(conversationPicks(info, 'episode-2', '').map((p) => p.value), ['conv-1', 'conv-2', '']);
  assert.deepEqual(conversationPicks(info, 'episode-9', '').map((p) => p.value), ['']);
});

test('restart policy: three restarts within three minutes, then stop; old crashes expire', () => {
  const p = new RestartPolicy(3, 180_000);
  assert.deepEqual([p.shouldRestart(0), p.shouldRestart(1000), p.shouldRestart(2000), p.shouldRestart(3000)], [true, true, true, false]);
  assert.equal(p.shouldRestart(3000 + 180_000), true);
  p.reset();
  assert.equal(p.recent, 0);
});

test('runls warning codes link to the README sections, through the command that opens its preview', () => {
  assert.equal(docsFragment('unfielded-line', 'runls'), 'unfielded-line');
  assert.equal(docsFragment('more-warnings', 'runls'), 'format-warnings');
  assert.equal(docsCommandUri('unfielded-line'), 'command:runls.showWarningDocs?%5B%22unfielded-line%22%5D');
  assert.deepEqual(JSON.parse(decodeURIComponent(docsCommandUri('a b').split('?')[1])), ['a b']);
  assert.equal(docsFragment('unindented-continuation', undefined), 'unindented-continuation');
  assert.equal(docsFragment('unfielded-line', 'eslint'), undefined);
  assert.equal(docsFragment({ value: 'unfielded-line', target: 'x' }, 'runls'), undefined);
  assert.equal(docsFragment(42, 'runls'), undefined);
});

test('workspace symbols: same prefix for every name, then the rank, so VS Code keeps the server order', () => {
  const syms = Array.from({ length: 12 }, (_, i) => ({ name: `piece ${i}` }));
  arrangeSymbols('migration+failed', syms);
  assert.equal(syms[0].name, 'migration+failed #01 piece 0');
  assert.equal(syms[11].name, 'migration+failed #12 piece 11');
  // VS Code's tie-break: lower-cased names with localeCompare.
  const shuffled = [...syms].reverse().sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
  assert.deepEqual(shuffled.map((s) => pieceText('migration+failed', s.name)), syms.map((_, i) => `piece ${i}`));
  const empty = [{ name: 'a' }, { name: 'b' }];
  assert.deepEqual(arrangeSymbols('', empty).map((s) => s.name), ['#1 a', '#2 b']);
});
