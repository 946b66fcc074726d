import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { IndexedOnce } from '../../src/indexed';
import { PartialRefresh } from '../../src/partial';
import type { RunInfo } from '../../src/protocol';

function runInfo(done: boolean): RunInfo {
  return { root: '/run', agents: [], episodes: [], indexing: { done, files: 3, bytes: 100 } };
}

/**
 * The extension's wiring in small: indexed() asks the Failures view again (counted)
 * and a partial answer shown is asked again (PartialRefresh, counted). `answers` are
 * run/info's answers to the poll, in order; the poll's sleep waits for step().
 */
function harness(answers: boolean[]) {
  const calls = { indexed: [] as Array<RunInfo | undefined>, failures: 0, again: 0, asked: 0 };
  const partial = new PartialRefresh(
    async () => false, // the partial answer arrived while indexing
    async () => {
      calls.again++;
    },
  );
  const once = new IndexedOnce((info) => {
    calls.indexed.push(info);
    calls.failures++;
    void partial.indexed();
  });
  let wake: (() => void) | undefined;
  const sleep = () => new Promise<void>((r) => (wake = r));
  /** Lets the poll's sleep end and the poll ask again. */
  const step = async () => {
    const w = wake;
    wake = undefined;
    w?.();
    await settle();
  };
  const ask = async () => {
    calls.asked++;
    return runInfo(answers.shift() ?? false);
  };
  return { once, partial, calls, step, ask, sleep };
}

/** Lets pending promise callbacks run. */
async function settle() {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

test('progress end, then the poll sees done: indexed once, the Failures view and the partial answer asked once', async () => {
  const h = harness([false, true]);
  const session = h.once.started();
  await h.partial.shown(true);
  const polling = h.once.poll(session, h.ask, { alive: () => true, sleep: h.sleep });
  await settle();
  assert.equal(h.calls.asked, 1, 'the poll asked once: not done');
  h.once.progressBegan();
  assert.equal(h.once.progressEnded(), true);
  assert.deepEqual(h.calls.indexed, [undefined], 'from the progress: run/info is the caller\'s to ask');
  await h.step(); // the poll wakes: the index is done, it asks no more
  await polling;
  assert.equal(h.calls.asked, 1, 'the poll stopped without asking again');
  assert.equal(h.once.polled(session, runInfo(true)), false, 'a late done answer of the poll does nothing');
  assert.equal(h.calls.failures, 1);
  assert.equal(h.calls.again, 1);
});

test('the poll sees done, then the progress ends: indexed once, with run/info\'s answer', async () => {
  const h = harness([false, true]);
  const session = h.once.started();
  h.once.progressBegan();
  await h.partial.shown(true);
  const polling = h.once.poll(session, h.ask, { alive: () => true, sleep: h.sleep });
  await settle();
  assert.equal(h.calls.indexed.length, 0);
  await h.step();
  await polling;
  assert.equal(h.calls.asked, 2);
  assert.equal(h.calls.indexed.length, 1);
  assert.equal(h.calls.indexed[0]?.indexing.done, true, 'the poll gives its answer');
  assert.equal(h.once.progressEnded(), false, 'the progress\'s end after it does nothing');
  await settle();
  assert.equal(h.calls.failures, 1, 'the Failures view is not asked twice');
  assert.equal(h.calls.again, 1, 'the partial answer is asked again once');
});

test('a server that sends no progress: the poll alone runs indexed, once', async () => {
  const h = harness([false, false, true]);
  const session = h.once.started();
  await h.partial.shown(true);
  const polling = h.once.poll(session, h.ask, { alive: () => true, sleep: h.sleep });
  await settle();
  await h.step();
  assert.equal(h.calls.indexed.length, 0, 'not done after two answers');
  await h.step();
  await polling;
  assert.equal(h.calls.asked, 3);
  assert.equal(h.calls.failures, 1);
  assert.equal(h.calls.again, 1);
  assert.equal(h.once.waiting(session), false);
});

test('a failed run/info is asked again; a server gone ends the poll without indexed', async () => {
  const h = harness([]);
  const session = h.once.started();
  let alive = true;
  let fails = 0;
  const errors: unknown[] = [];
  const polling = h.once.poll(
    session,
    async () => {
      if (fails++ === 0) throw new Error('not yet');
      return runInfo(false);
    },
    { alive: () => alive, sleep: h.sleep, onError: (e) => errors.push(e) },
  );
  await settle();
  assert.equal(errors.length, 1);
  await h.step();
  assert.equal(fails, 2, 'asked again after the failure');
  alive = false;
  await h.step();
  await polling;
  assert.equal(fails, 2, 'no ask once the server is gone');
  assert.equal(h.calls.indexed.length, 0);
});

test('a restart (a new client or a crash restart) awaits its own first index; the old session\'s answers do nothing', async () => {
  const h = harness([]);
  const first = h.once.started();
  assert.equal(h.once.polled(first, runInfo(true)), true);
  assert.equal(h.calls.failures, 1);
  const second = h.once.started();
  assert.notEqual(second, first);
  assert.equal(h.once.polled(first, runInfo(true)), false, 'an answer of the old session\'s poll');
  assert.equal(h.calls.failures, 1);
  h.once.progressBegan();
  assert.equal(h.once.progressEnded(), true, 'the new server\'s index');
  assert.equal(h.once.polled(second, runInfo(true)), false);
  assert.equal(h.calls.failures, 2);
});

test('a progress that begins after the first index (the run indexed afresh) runs indexed again at its end', async () => {
  const h = harness([]);
  const session = h.once.started();
  h.once.progressBegan();
  assert.equal(h.once.progressEnded(), true);
  assert.equal(h.once.progressEnded(), false, 'one end, once');
  h.once.progressBegan();
  assert.equal(h.once.waiting(session), true);
  assert.equal(h.once.progressEnded(), true);
  assert.equal(h.calls.failures, 2);
});
