import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { DEFAULTS } from '../../src/settings';
import { applyProgress, contextLabel, ServerState, statusView } from '../../src/status';

test('progress moves the state through indexing N% to ready', () => {
  let s: ServerState = { kind: 'starting' };
  s = applyProgress(s, { kind: 'begin', title: 'Indexing', percentage: 0 });
  assert.deepEqual(s, { kind: 'indexing', percent: 0, message: 'Indexing' });
  assert.equal(statusView(s, DEFAULTS).text, '$(sync~spin) runls: indexing 0%');
  s = applyProgress(s, { kind: 'report', percentage: 42.4, message: '120 files' });
  assert.equal(statusView(s, DEFAULTS).text, '$(sync~spin) runls: indexing 42%');
  assert.match(statusView(s, DEFAULTS).tooltip, /42%: 120 files/);
  s = applyProgress(s, { kind: 'report', message: 'no percentage' });
  assert.equal((s as { percent?: number }).percent, 42.4);
  s = applyProgress(s, { kind: 'report', percentage: 30 }); // out of order: ignored
  assert.equal((s as { percent?: number }).percent, 42.4);
  s = applyProgress(s, { kind: 'report', percentage: 250 });
  assert.equal((s as { percent?: number }).percent, 100);
  s = applyProgress(s, { kind: 'end' });
  assert.deepEqual(s, { kind: 'ready' });
});

test('a report without a begin still shows indexing; progress never hides an error', () => {
  assert.deepEqual(applyProgress({ kind: 'ready' }, { kind: 'report', percentage: 10 }), { kind: 'indexing', percent: 10, message: undefined });
  const err: ServerState = { kind: 'error', message: 'boom' };
  assert.equal(applyProgress(err, { kind: 'end' }), err);
});

test('status text for each state names the context when ready', () => {
  const s = { ...DEFAULTS, agent: 'alice', episode: 'episode-2', conversation: 'conv-1' };
  assert.equal(statusView({ kind: 'starting' }, s).text, '$(loading~spin) runls: starting');
  assert.equal(statusView({ kind: 'ready' }, s).text, '$(search) runls: alice · episode-2 (scope: run) · conv-1');
  assert.equal(statusView({ kind: 'indexing' }, s).text, '$(sync~spin) runls: indexing');
  const e = statusView({ kind: 'error', message: 'runls not found' }, s);
  assert.equal(e.text, '$(error) runls: error');
  assert.equal(e.alert, 'error');
  assert.match(e.tooltip, /runls not found/);
  assert.equal(statusView({ kind: 'stopped' }, s).alert, 'warning');
  assert.equal(contextLabel(DEFAULTS), 'all agents · no episode (scope: run) · no conversation');
  assert.equal(contextLabel({ ...s, scope: 'episode' }), 'alice · episode-2 (scope: episode) · conv-1');
  assert.match(statusView({ kind: 'ready' }, { ...s, scope: 'episode' }).tooltip, /current episode only/);
});
