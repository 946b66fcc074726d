import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { blockAt, conversationUri, dayOf, duration, EARLIER_LINE, filterWords, GAP_MS, parseConversationUri, parseTimeBound, recordContext, recordIndexAt, recordsParams, render, sameUri, secondOf, span, summaryPicks, timeMs } from '../../src/conversation';
import type { WireRecord } from '../../src/protocol';

function rec(time: string | null, agent: string, level: string | null, text: string, line: number): WireRecord {
  const range = { start: { line, character: 0 }, end: { line, character: 10 } };
  return { location: { uri: `file:///run/episode-2/${agent}/${agent}.log`, range }, time, level, state: 'running', conversation: 'conv-1', agent, episode: 'episode-2', text };
}

test('render: a block per record, its header then its lines; the gaps of a minute or more; blocks found by line', () => {
  const q = { episode: 'episode-2', conversation: 'conv-1' };
  const r = render(q, [
    rec('2026-10-21 18:00:02', 'alice', null, 'Alice was told: go', 1),
    rec('2026-10-21 18:00:41.007', 'bob', 'ERROR', 'Bob failed\njava.lang.Exception: x', 4),
    rec('2026-10-21 18:01:41,007', 'bob', 'INFO', 'Bob retried', 9),
  ], true);
  assert.deepEqual(r.text.split('\n'), [
    'runls: episode-2 · conv-1 · 3+ records · all levels · all agents · whole conversation',
    '',
    '2026-10-21 18:00:02 · alice · conv-1',
    '  Alice was told: go',
    '2026-10-21 18:00:41.007 · bob · ERROR · conv-1',
    '  Bob failed',
    '  java.lang.Exception: x',
    '⋯ 1 min later',
    '2026-10-21 18:01:41,007 · bob · INFO · conv-1',
    '  Bob retried',
    '',
    '… more records: scroll to the end, or run "runls: Load More Records".',
    '',
  ]);
  assert.deepEqual(r.blocks.map((b) => [b.header, b.last, b.location.range.start.line]), [[2, 3, 1], [4, 6, 4], [8, 9, 9]]);
  assert.equal(blockAt(r.blocks, 6)?.header, 4);
  assert.equal(blockAt(r.blocks, 7), undefined, 'the gap line is no block');
  assert.equal(blockAt(r.blocks, 0), undefined);
  assert.equal(blockAt(r.blocks, 9)?.header, 8);
  assert.match(render(q, [], false).text, /No records/);
});

test('times and gaps: ,SSS and .SSS read alike; durations in words', () => {
  assert.equal(timeMs('2026-10-21 18:00:00,500'), timeMs('2026-10-21 18:00:00.500'));
  assert.equal(timeMs(null), undefined);
  assert.equal(GAP_MS, 60_000);
  assert.equal(duration(59_400), '59 s');
  assert.equal(duration(228_000), '3 min 48 s');
  assert.equal(duration(3 * 3600_000 + 60_000), '3 h 1 min');
  assert.equal(duration(26 * 3600_000), '1 d 2 h');
  assert.equal(span('2026-10-21 18:00:02', '2026-10-21 18:08:00'), '2026-10-21 18:00:02 – 18:08:00');
  assert.equal(span('2026-10-21 18:00:02', '2026-10-22 08:00:00'), '2026-10-21 18:00:02 – 2026-10-22 08:00:00');
});

test('the document URI keeps the query; a filtered tab is titled with its filters', () => {
  const q = { episode: 'episode-2', conversation: 'conv-1', agent: 'bob', minLevel: 'WARN', from: '2026-10-21 18:00:00' };
  const uri = new URL(conversationUri(q));
  assert.equal(uri.protocol, 'runls-conversation:');
  assert.equal(decodeURIComponent(uri.pathname), '/episode-2/conv-1 (WARN+, bob, 18:00:00–…)');
  assert.equal(new URL(conversationUri({ episode: 'episode-2', conversation: 'conv-1' })).pathname, '/episode-2/conv-1');
  assert.equal(decodeURIComponent(new URL(conversationUri({ episode: 'episode-2', conversation: '' })).pathname), '/episode-2/all records');
  assert.deepEqual(filterWords({ episode: 'e', conversation: 'c', to: '2026-10-21 18:10:59' }), ['…–18:10:59']);
  assert.deepEqual(parseConversationUri(uri.search.slice(1)), q);
  assert.equal(parseConversationUri(''), undefined);
  assert.equal(parseConversationUri('q=bm90IGpzb24'), undefined);
  assert.equal(parseConversationUri('q=' + Buffer.from('{"episode":1}').toString('base64url')), undefined);
});

test('ids holding URI characters come back whole, also from a decoded query', () => {
  for (const conversation of ['a/b', '50%', 'x&y=z', 'q#1', 'caf\u00e9 ☕']) {
    const q = { episode: 'episode-2', conversation };
    const uri = new URL(conversationUri(q));
    assert.deepEqual(parseConversationUri(uri.search.slice(1)), q, conversation);
    assert.deepEqual(parseConversationUri(decodeURIComponent(uri.search.slice(1))), q, conversation);
    assert.equal(uri.pathname.split('/').length, 3, conversation);
  }
});

test('summaryPicks: agents, record count, time span and line', () => {
  const [p] = summaryPicks([{ conversation: 'conv-1', agents: ['alice', 'bob'], records: 14, first: '2026-10-21 18:00:02', last: '2026-10-21 18:08:00', line: 'told: go' }]);
  assert.equal(p.description, 'alice, bob · 14 records · 2026-10-21 18:00:02 – 18:08:00');
  assert.equal(p.detail, 'told: go');
  assert.equal(p.conversation, 'conv-1');
});

test('recordContext: the conversation and time of the record above a continuation line, the episode of the path', () => {
  const lines = ['2026-10-21 18:01:02.310 ERROR [running] [conv-1] Bob failed', 'java.lang.Exception: x', '  at X', '2026-10-21 18:00:00 [running] Bob unfielded'];
  const at = (n: number) => recordContext('episode-2/bob/bob.log', (i) => lines[i], n);
  assert.deepEqual(at(2), { episode: 'episode-2', conversation: 'conv-1', time: '2026-10-21 18:01:02.310', line: 0 });
  assert.deepEqual(at(0), { episode: 'episode-2', conversation: 'conv-1', time: '2026-10-21 18:01:02.310', line: 0 });
  assert.deepEqual(at(3), { episode: 'episode-2', conversation: '', time: '2026-10-21 18:00:00', line: 3 }, 'an unfielded record: the episode view');
  assert.equal(recordContext('notes/bob.log', (i) => lines[i], 0), undefined);
});

test('render: the line that says earlier records can be loaded stands above the blocks', () => {
  const r = render({ episode: 'episode-2', conversation: 'conv-1', minLevel: 'ERROR' }, [rec('2026-10-21 18:00:41', 'bob', 'ERROR', 'Bob failed', 4)], false, true);
  const lines = r.text.split('\n');
  assert.equal(lines[0], 'runls: episode-2 · conv-1 · …1 records · ERROR and up (records without a level left out) · all agents · whole conversation');
  assert.equal(lines[2], EARLIER_LINE);
  assert.equal(r.blocks[0].header, 4);
  assert.deepEqual([r.blocks[0].level, r.blocks[0].agent, r.blocks[0].first], ['ERROR', 'bob', 'Bob failed']);
});

test('recordIndexAt: the record whose lines hold the location, in its file; URIs compared once unescaped', () => {
  const rs = [rec('2026-10-21 18:00:02', 'alice', null, 'a', 1), rec('2026-10-21 18:00:03', 'bob', 'ERROR', 'b\nc', 4)];
  rs[1].location.range.end.line = 6;
  const loc = (uri: string, line: number) => ({ uri, range: { start: { line, character: 0 }, end: { line, character: 0 } } });
  assert.equal(recordIndexAt(rs, loc('file:///run/episode-2/bob/bob.log', 5)), 1, 'a continuation line');
  assert.equal(recordIndexAt(rs, loc('file:///run/episode-2/bob/bob.log', 4)), 1);
  assert.equal(recordIndexAt(rs, loc('file:///run/episode-2/alice/alice.log', 4)), -1, 'another file');
  assert.equal(recordIndexAt(rs, loc('file:///run/episode-2/bob/bob.log', 7)), -1);
  assert.ok(sameUri('file:///my%20run/a.log', 'file:///my run/a.log'));
  assert.ok(sameUri('file:///c%3A/r/a.log', 'file:///C:/r/a.log'));
  assert.deepEqual(recordsParams({ episode: 'episode-2', conversation: 'conv-1', agent: 'bob' }, { at: loc('file:///x', 3), limit: 20 }), {
    episode: 'episode-2', conversation: 'conv-1', agent: 'bob', minLevel: undefined, from: undefined, to: undefined, at: loc('file:///x', 3), limit: 20, cursor: undefined,
  });
});

test('time bounds: HH:mm[:ss] on the record\'s day, a full date, seconds left out as :00 or :59', () => {
  const day = dayOf('2026-10-21 18:04:37.847');
  assert.equal(day, '2026-10-21');
  assert.deepEqual(parseTimeBound('18:04', day, false), { value: '2026-10-21 18:04:00' });
  assert.deepEqual(parseTimeBound('18:04', day, true), { value: '2026-10-21 18:04:59' });
  assert.deepEqual(parseTimeBound(' 8:04:37 ', day, true), { value: '2026-10-21 08:04:37' });
  assert.deepEqual(parseTimeBound('2026-10-20T23:59', day, false), { value: '2026-10-20 23:59:00' });
  assert.deepEqual(parseTimeBound('', day, false), { value: '' });
  assert.ok('error' in parseTimeBound('25:00', day, false));
  assert.ok('error' in parseTimeBound('yesterday', day, false));
  assert.ok('error' in parseTimeBound('18:04', undefined, false), 'no day to put it on');
  assert.equal(secondOf('2026-10-21 18:04:37,847'), '2026-10-21 18:04:37');
  assert.equal(secondOf('2026-10-21 18:04:37.847', -5 * 60_000), '2026-10-21 17:59:37');
  assert.equal(secondOf('2026-10-21 00:01:00', -5 * 60_000), '2026-10-20 23:56:00');
});
