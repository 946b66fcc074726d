import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { SearchItem } from '../../src/protocol';
import { escapeIcons, pickLocation, pickTitle, relativePath, shorten, toPicks } from '../../src/results';

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
    ...over,
  };
}

test('picks keep the server order and show text, file:line, agent, episode, conversation, score', () => {
  const items = [item({}), item({ text: 'second', score: 1, conversation: null, reading: 'said', location: { uri: `${root}/episode-2/alice/notes.md`, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 6 } } } })];
  const picks = toPicks(items, root);
  assert.equal(picks.length, 2);
  assert.deepEqual(
    picks.map((p) => [p.label, p.description, p.detail, p.alwaysShow]),
    [
      ['$(note) Bob migration dry-run failed', '', '#1  bob · episode-2 · conv-1  ·  episode-2/bob/bob.log:3  ·  score 2.35  ·  note', true],
      ['$(comment) second', '', '#2  bob · episode-2  ·  episode-2/alice/notes.md:1  ·  score 1.00  ·  said', true],
    ],
  );
});

test('choosing a pick goes back to the exact evidence location', () => {
  const it = item({});
  const [pick] = toPicks([it], root);
  assert.deepEqual(pickLocation(pick), it.location);
  assert.equal(pickLocation(pick).range.start.character, 47);
});

test('paths outside the root stay whole; encoded characters are decoded', () => {
  assert.equal(relativePath(`${root}/episode-1/a/x.txt`, root), 'episode-1/a/x.txt');
  assert.equal(relativePath(`${root}/episode-1/a/x.txt`, `${root}/`), 'episode-1/a/x.txt');
  assert.equal(relativePath('file:///elsewhere/y.txt', root), '/elsewhere/y.txt');
  assert.equal(relativePath(`${root}2/z.txt`, root), '/home/u/my run2/z.txt');
});

test('long text is shortened without splitting a surrogate pair; icons are escaped', () => {
  assert.equal(shorten('a\n b', 10), 'a b');
  const s = shorten('x'.repeat(8) + '😀' + 'y', 10);
  assert.equal(s, 'xxxxxxxx…');
  assert.equal(shorten('x'.repeat(20), 10).length, 10);
  assert.equal(escapeIcons('cost $(zap) now'), 'cost \\$(zap) now');
  const [pick] = toPicks([item({ text: 'run $(rm -rf) later' })], root);
  assert.equal(pick.label, '$(note) run \\$(rm -rf) later');
});

test('the title carries the query, count and context', () => {
  assert.equal(pickTitle('hotel booking', 3, 'all agents · episode-2 · conv-2'), 'runls: "hotel booking": 3 pieces of evidence (all agents · episode-2 · conv-2)');
  assert.equal(pickTitle('q', 1, ''), 'runls: "q": 1 piece of evidence');
});
