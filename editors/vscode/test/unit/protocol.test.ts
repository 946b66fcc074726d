import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { checkRunInfo, dropEmpty, info, search, RequestSender } from '../../src/protocol';

function fakeSender(answer: unknown, seen: Array<[string, unknown]>): RequestSender {
  return {
    sendRequest: async <R>(method: string, params: unknown) => {
      seen.push([method, params]);
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
