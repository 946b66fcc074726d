import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { SearchItem } from '../../src/protocol';
import { evidenceRows, nextTopK, relativePath, resultsMessage, sentences, shorten, shortenWithRanges, staleSentence } from '../../src/results';

const root = 'file:///home/u/my%20run';
function item(over: Partial<SearchItem>): SearchItem {
  return {
    location: { uri: `${root}/episode-2/bob/bob.log`, range: { start: { line: 2, character: 47 }, end: { line: 2, character: 75 } } },
    score: 2.345678,
    text: 'Bob migration dry-run failed',
    agent: 'bob',
    episode: 'episode-2',
    conversation: 'conv-1',
    reading: 'note',
    time: '2026-10-21 18:01:02.310',
    level: 'ERROR',
    matches: [[4, 13]],
    ...over,
  };
}

test('rows keep the server order and lead with rank, episode · agent and clock time; the text with the query words highlighted; time, level, conversation, file:line after', () => {
  const items = [
    item({}),
    item({ text: 'second  note', score: 1, conversation: null, reading: 'said', time: null, level: null, matches: [[8, 12]],
      location: { uri: `${root}/episode-2/alice/notes.md`, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 6 } } } }),
  ];
  const rows = evidenceRows(items, root);
  assert.deepEqual(
    rows.map((r) => [r.label, r.highlights, r.description, r.icon]),
    [
      ['#1  episode-2 · bob 18:01:02  Bob migration dry-run failed', [[34, 43]], '2026-10-21 18:01:02.310 ERROR  ·  [conv-1]  ·  episode-2/bob/bob.log:3', 'error'],
      ['#2  episode-2 · bob  second note', [[28, 32]], 'episode-2/alice/notes.md:1', 'comment'],
    ],
  );
  assert.equal(rows[0].label.slice(34, 43), 'migration');
  assert.equal(rows[1].label.slice(28, 32), 'note');
  assert.deepEqual(rows[0].item.location, items[0].location);
  assert.ok(rows[0].tooltip.includes("score 2\\.35 · note"), rows[0].tooltip); // Markdown, escaped
});

test('ranges follow the text as it is folded to a line and cut', () => {
  assert.deepEqual(shortenWithRanges('  a\n\n  bb  c ', [[2, 3], [7, 9], [11, 12]], 100), { text: 'a bb c', ranges: [[0, 1], [2, 4], [5, 6]] });
  // Cut at 10 units: a range past the cut is gone, one across it ends there.
  assert.deepEqual(shortenWithRanges('xxxxxx yyyyy zz', [[0, 6], [7, 12], [13, 15]], 10), { text: 'xxxxxx yy…', ranges: [[0, 6], [7, 9]] });
  // UTF-16 units, and no surrogate pair split.
  assert.deepEqual(shortenWithRanges('😀 café', [[3, 7]], 100), { text: '😀 café', ranges: [[3, 7]] });
  assert.equal(shorten('x'.repeat(8) + '😀' + 'y', 10), 'xxxxxxxx…');
  assert.equal(shorten('x'.repeat(20), 10).length, 10);
  // Ranges out of the text are dropped, not thrown on.
  assert.deepEqual(shortenWithRanges('abc', [[2, 9], [1, 1]], 10).ranges, []);
});

test('paths outside the root stay whole; encoded characters are decoded', () => {
  assert.equal(relativePath(`${root}/episode-1/a/x.txt`, root), 'episode-1/a/x.txt');
  assert.equal(relativePath(`${root}/episode-1/a/x.txt`, `${root}/`), 'episode-1/a/x.txt');
  assert.equal(relativePath('file:///elsewhere/y.txt', root), '/elsewhere/y.txt');
  assert.equal(relativePath(`${root}2/z.txt`, root), '/home/u/my run2/z.txt');
});

test('the sentences say what the filters hid and offer the widening', () => {
  const asked = { agent: 'Alice', episode: 'episode-2', conversation: 'conv-2' };
  const said = sentences(
    {
      hidden: { scope: 1, noContext: 2, unfielded: 3, otherConversation: 4 },
      notices: [
        { field: 'agent', value: 'Alice', message: 'the run has no agent folder named Alice (alice differs only in case)', suggestion: 'alice' },
        { field: 'conversation', value: 'conv-9', message: 'no record of episode-2 was written in conversation conv-9', suggestion: null },
      ],
    },
    asked,
  );
  assert.deepEqual(
    said.map((s) => [s.text, s.action?.title, s.action?.widening]),
    [
      ['the run has no agent folder named Alice (alice differs only in case)', 'Search alice', { kind: 'agent', value: 'alice' }],
      ['no record of episode-2 was written in conversation conv-9', 'Pick the conversation', { kind: 'pickConversation' }],
      ['1 more outside episode-2', 'Search the whole run', { kind: 'scopeRun' }],
      ['2 more in record files, which need an episode and a conversation', 'Pick the chat context', { kind: 'pickContext' }],
      ['3 more without the conversation field in episode-2 (evidence only from another episode)', undefined, undefined],
      ['4 more in other conversations of episode-2', 'Search all conversations', { kind: 'allConversations' }],
    ],
  );
  const noAgent = sentences({ hidden: {}, notices: [{ field: 'agent', value: 'dave', message: 'm', suggestion: null }] }, asked);
  assert.deepEqual(noAgent[0].action?.widening, { kind: 'agent', value: '' });
  assert.deepEqual(sentences({ hidden: {}, notices: [] }, asked), []);
});

test('Load more asks for the next page while the server may have more', () => {
  assert.equal(nextTopK(5, 5, 5), 10);
  assert.equal(nextTopK(5, 3, 5), undefined, 'fewer than asked: that was all');
  assert.equal(nextTopK(998, 998, 5), 1000);
  assert.equal(nextTopK(1000, 1000, 5), undefined);
  assert.equal(resultsMessage('hotel booking', 3, 'all agents · episode-2 · conv-2'), '"hotel booking": 3 pieces of evidence (all agents · episode-2 · conv-2)');
  assert.equal(resultsMessage('q', 1, ''), '"q": 1 piece of evidence');
});

test('time order: oldest first, pieces without a time last, each row keeping its rank', () => {
  const items = [
    item({ time: '2026-10-21 18:05:00.000', text: 'b' }),
    item({ time: null, level: null, text: 'note' }),
    item({ time: '2026-10-21 18:01:00,500', text: 'a' }),
    item({ time: '2026-10-21 18:01:00.100', text: 'a0' }),
  ];
  const rows = evidenceRows(items, root, 'time');
  assert.deepEqual(rows.map((r) => [r.rank, r.item.text]), [[4, 'a0'], [3, 'a'], [1, 'b'], [2, 'note']]);
  assert.ok(rows[0].label.startsWith('#4  episode-2 · bob 18:01:00  a0'), rows[0].label);
  assert.deepEqual(evidenceRows(items, root).map((r) => r.rank), [1, 2, 3, 4]);
  assert.equal(resultsMessage('q', 4, 'ctx', 'time'), '"q": 4 pieces of evidence (ctx), in time order');
});

test('a result asked in another context than the one set is stale, with the action that asks again', () => {
  assert.equal(staleSentence('a · episode-2 (scope: run) · conv-1', 'a · episode-2 (scope: run) · conv-1'), undefined);
  const s = staleSentence('all agents · episode-2 (scope: run) · conv-1', 'all agents · episode-3 (scope: run) · conv-1');
  assert.ok(s);
  assert.equal(s.text, 'Stale: asked in all agents · episode-2 (scope: run) · conv-1; the context is now all agents · episode-3 (scope: run) · conv-1');
  assert.deepEqual(s.action?.widening, { kind: 'again' });
});
