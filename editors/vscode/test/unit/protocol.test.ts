import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { checkRunInfo, dropEmpty, info, infoWhenIndexed, search, RequestSender } from '../../src/protocol';

function fakeSender(answer: unknown, seen: Array<[string, unknown]>): RequestSender {
  return {
    sendRequest: async <R>(method: string, ...args: unknown[]) => {
      // Exactly one params argument unless a token is given (vscode-jsonrpc would
      // otherwise send an array).
      seen.push([method, args.length === 1 ? args[0] : args]);
      return answer as R;
    },
  };
}

test('empty and undefined fields are dropped so the server applies its settings', () => {
  assert.deepEqual(dropEmpty({ query: 'q', agent: '', episode: undefined, conversation: 'c', topK: 5 }), {
    query: 'q',
    conversation: 'c',
    topK: 5,
  });
});

test('search sends run/search and returns the items', async () => {
  const seen: Array<[string, unknown]> = [];
  const item = {
    location: { uri: 'file:///r/episode-2/bob/bob.log', range: { start: { line: 2, character: 47 }, end: { line: 2, character: 74 } } },
    score: 3.5,
    text: 'Bob migration dry-run failed',
    agent: 'bob',
    episode: 'episode-2',
    conversation: 'conv-1',
    reading: 'note',
  };
  const r = await search(fakeSender({ items: [item] }, seen), { query: 'migration', agent: '' });
  assert.deepEqual(seen, [['run/search', { query: 'migration' }]]);
  await info(fakeSender({ agents: [], episodes: [] }, seen));
  assert.deepEqual(seen[1], ['run/info', {}]);
  assert.equal(r.items[0].text, 'Bob migration dry-run failed');
});

test('a malformed answer is an error that says so', async () => {
  await assert.rejects(search(fakeSender({ results: [] }, []), { query: 'x' }), /run\/search: unexpected result/);
  await assert.rejects(search(fakeSender({ items: [{ text: 'no location' }] }, []), { query: 'x' }), /malformed item/);
  await assert.rejects(info(fakeSender(null, [])), /run\/info: unexpected result/);
});

test('run/info fills absent lists', () => {
  const r = checkRunInfo({ root: 'file:///r', agents: [], episodes: [{ episode: 'episode-1' }] });
  assert.deepEqual(r.episodes[0], { episode: 'episode-1', agents: [], conversations: [] });
  assert.deepEqual(r.indexing, { done: true, files: 0, bytes: 0 });
});

test('run/info is asked again until indexing is done, or the time is up', async () => {
  const answers = [false, false, true].map((done, i) => ({ root: 'file:///r', agents: done ? ['alice'] : [], episodes: [], indexing: { done, files: i, bytes: 0 } }));
  let n = 0;
  const sender: RequestSender = { sendRequest: async <R>() => answers[Math.min(n++, 2)] as R };
  let clock = 0;
  const r = await infoWhenIndexed(sender, { sleep: async (ms) => void (clock += ms), now: () => clock, intervalMs: 100 });
  assert.deepEqual(r.agents, ['alice']);
  assert.equal(n, 3);
  n = 0;
  const partial = await infoWhenIndexed(sender, { sleep: async (ms) => void (clock += ms), now: () => clock, intervalMs: 100, timeoutMs: 50 });
  assert.equal(partial.indexing.done, false);
  assert.equal(n, 2);
});
