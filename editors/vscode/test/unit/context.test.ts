import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { conversationPicks, naturalCompare, scopePicks } from '../../src/context';
import type { RunInfo } from '../../src/protocol';
import { parseServerLine } from '../../src/serverLog';
import { DEFAULTS, withContext } from '../../src/settings';
import { formatBytes, runOverview, statusView } from '../../src/status';

test('conversation ids in natural order: conv-2 before conv-10', () => {
  const ids = ['conv-1', 'conv-10', 'conv-11', 'conv-2', 'conv-7f3a', 'conv-07', '-x', 'a', 'conv-', 'conv-9b'];
  assert.deepEqual([...ids].sort(naturalCompare), ['-x', 'a', 'conv-', 'conv-1', 'conv-2', 'conv-07', 'conv-7f3a', 'conv-9b', 'conv-10', 'conv-11']);
  const info: RunInfo = {
    root: 'file:///r',
    agents: ['a'],
    episodes: [{ episode: 'episode-2', agents: ['a'], conversations: ['conv-1', 'conv-10', 'conv-2'] }],
    indexing: { done: true, files: 1, bytes: 1 },
  };
  assert.deepEqual(conversationPicks(info, 'episode-2', '').map((p) => p.value), ['conv-1', 'conv-2', 'conv-10', '']);
});

test('the scope picks mark the current scope and put it first', () => {
  assert.deepEqual(scopePicks('episode').map((p) => [p.value, !!p.picked]), [['episode', true], ['run', false]]);
  assert.deepEqual(scopePicks('').map((p) => [p.value, !!p.picked]), [['run', true], ['episode', false]]);
});

test('the picked context lies over the settings; what was never picked keeps the setting', () => {
  const s = { ...DEFAULTS, agent: 'bob', episode: 'episode-1', scope: 'episode' as const };
  assert.deepEqual(withContext(s, {}), s);
  const w = withContext(s, { episode: 'episode-2', conversation: ' conv-1 ', agent: '', scope: 'run' });
  assert.deepEqual([w.agent, w.episode, w.conversation, w.scope], ['', 'episode-2', 'conv-1', 'run']);
});

test('server log lines keep their level; other lines are errors', () => {
  assert.deepEqual(parseServerLine('2026-12-01T13:17:26.405Z\tINFO\tindexed\t{"files": 12}'), { level: 'info', text: 'indexed {"files": 12}' });
  assert.deepEqual(parseServerLine('2026-12-01T13:17:26.405Z\tWARN\tunreadable'), { level: 'warn', text: 'unreadable' });
  assert.deepEqual(parseServerLine('2026-12-01T13:17:26.405Z\tDEBUG\trun/search\t{"items": 5}').level, 'debug');
  assert.deepEqual(parseServerLine('panic: boom'), { level: 'error', text: 'panic: boom' });
});

test('the status bar tooltip gives the run overview and the scope', () => {
  const info: RunInfo = {
    root: 'file:///r',
    agents: ['alice', 'bob'],
    episodes: [{ episode: 'episode-1', agents: ['alice'], conversations: [] }, { episode: 'episode-2', agents: ['bob'], conversations: ['c'] }],
    indexing: { done: true, files: 12, bytes: 1_234_567 },
  };
  assert.equal(runOverview(info), 'Run: 12 files, 1.2 MB · 2 episodes · 2 agents (alice, bob)');
  const v = statusView({ kind: 'ready' }, { ...DEFAULTS, episode: 'episode-2' }, info);
  assert.match(v.tooltip, /Run: 12 files, 1\.2 MB/);
  assert.match(v.tooltip, /Context: all agents · episode-2 \(scope: run\) · no conversation: searches cover every episode of the run/);
  assert.equal(formatBytes(999), '999 B');
  assert.equal(formatBytes(25_000_000_000), '25 GB');
});
