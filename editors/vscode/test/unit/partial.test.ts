import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { PartialRefresh, partialShare } from '../../src/partial';
import { resultsMessage, resultsTitle, sentences } from '../../src/results';

const indexing = { field: 'indexing', value: '40%', message: 'the run is still being indexed: this answer is partial', suggestion: null };
const asked = { agent: '', episode: 'episode-2', conversation: 'conv-1' };

test('a result with the indexing notice is partial: its share, the message, the title and its sentence say so', () => {
  assert.equal(partialShare({ notices: [indexing] }), '40%');
  assert.equal(partialShare({ notices: [] }), undefined);
  assert.equal(resultsMessage('deploy', 2, 'ctx', 'rank', '40%'), 'Partial (40% indexed): "deploy": 2 pieces of evidence (ctx)');
  assert.equal(resultsMessage('deploy', 2, 'ctx'), '"deploy": 2 pieces of evidence (ctx)');
  assert.equal(resultsTitle(false, false), 'Evidence');
  assert.equal(resultsTitle(false, true), 'Evidence (partial)');
  assert.equal(resultsTitle(true, true), 'Evidence (stale, partial)');
  const said = sentences({ hidden: {}, notices: [indexing] }, asked);
  assert.deepEqual(said, [{ text: 'Partial: made from the 40% of the run indexed so far; searched again when indexing ends', partial: true }]);
});

function refresh(done: boolean[]) {
  const calls = { info: 0, again: 0 };
  const r = new PartialRefresh(
    async () => {
      calls.info++;
      return done.shift() ?? false;
    },
    async () => {
      calls.again++;
    },
  );
  return { r, calls };
}

test('a partial answer is asked again once, at the end of indexing', async () => {
  const { r, calls } = refresh([false]);
  await r.shown(true);
  assert.equal(calls.info, 1, 'run/info asked');
  assert.equal(calls.again, 0, 'not done yet');
  assert.ok(r.waiting);
  await r.indexed();
  assert.equal(calls.again, 1, 'asked again at the end');
  await r.indexed();
  assert.equal(calls.again, 1, 'once');
});

test('a partial answer that arrives after indexing ended is asked again at once', async () => {
  const { r, calls } = refresh([true]);
  await r.shown(true);
  assert.equal(calls.again, 1);
  assert.ok(!r.waiting);
});

test('a whole answer, or a newer search, cancels the wait', async () => {
  const { r, calls } = refresh([false]);
  await r.shown(true);
  await r.shown(false);
  await r.indexed();
  assert.equal(calls.again, 0);
  assert.equal(calls.info, 1, 'a whole answer asks nothing');
});
