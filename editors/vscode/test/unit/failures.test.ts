import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { failuresMessage, groupRecords, groupRows, listGroups, recordRows } from '../../src/failures';
import { failures, RequestSender } from '../../src/protocol';

const root = 'file:///run';
const loc = (path: string, line: number) => ({ uri: `${root}/${path}`, range: { start: { line, character: 0 }, end: { line: line + 2, character: 5 } } });

test('run/failures: params without empty fields; absent lists and times filled; a malformed answer named', async () => {
  const seen: unknown[] = [];
  const sender: RequestSender = {
    sendRequest: async <R>(method: string, params: unknown) => {
      seen.push([method, params]);
      return { groups: [{ pattern: 'Connection to <*> refused', count: 3, records: [loc('episode-2/bob/bob.log', 4)] }] } as R;
    },
  };
  const r = await failures(sender, { episode: '', agent: 'bob' });
  assert.deepEqual(seen, [['run/failures', { agent: 'bob' }]]);
  assert.deepEqual(r.groups[0].agents, []);
  assert.equal(r.groups[0].first, null);
  const bad: RequestSender = { sendRequest: async <R>() => ({ groups: [{ count: 1 }] }) as R };
  await assert.rejects(failures(bad, {}), /run\/failures: malformed group/);
});

test('failure rows: count and pattern, who and when; records by path and line; the message counts records', () => {
  const result = {
    groups: [
      { pattern: 'Timeout after <N> ms calling <*>', count: 120, agents: ['alice', 'bob'], episodes: ['episode-2', 'episode-3'], first: '2026-10-21 18:00:02', last: '2026-10-21 18:08:00', records: [loc('episode-2/bob/bob.log', 4), loc('episode-3/alice/alice.log', 9)] },
      { pattern: 'java.lang.IllegalStateException: <*>', count: 1, agents: ['carol'], episodes: ['episode-3'], first: null, last: null, records: [loc('episode-3/carol/carol.log', 0)] },
    ],
  };
  const rows = groupRows(result);
  assert.equal(rows[0].label, '120× Timeout after <N> ms calling <*>');
  assert.equal(rows[0].description, 'alice, bob · episode-2, episode-3 · 2026-10-21 18:00:02 – 18:08:00');
  assert.match(rows[0].tooltip, /120 records \(the first 100 listed\)/);
  assert.doesNotMatch(rows[1].tooltip, /listed/);
  assert.equal(rows[1].description, 'carol · episode-3');
  assert.deepEqual(recordRows(result.groups[0], root).map((r) => r.label), ['episode-2/bob/bob.log:5', 'episode-3/alice/alice.log:10']);
  assert.equal(failuresMessage(result, {}), '2 groups, 121 records (whole run · all agents · ERROR and up, and exceptions)');
  assert.equal(failuresMessage({ groups: [] }, { episode: 'episode-2', minLevel: 'WARN' }), '0 groups, 0 records (episode-2 · all agents · WARN and up, and exceptions)');
  const many = { groups: Array.from({ length: 200 }, () => result.groups[1]) };
  assert.equal(failuresMessage(many, {}), '200 groups (the most frequent), 200 records (whole run · all agents · ERROR and up, and exceptions)');
});

test('the list asks for no locations; a group expanded asks for its pattern with the same filters, once', async () => {
  const seen: unknown[] = [];
  const group = { pattern: 'Timeout after <n> ms', count: 2, agents: ['bob'], episodes: ['episode-2'], first: null, last: null, records: [] };
  const sender: RequestSender = {
    sendRequest: async <R>(method: string, params: unknown) => {
      seen.push([method, params]);
      const p = params as { pattern?: string };
      if (p.pattern === undefined) return { groups: [group] } as R;
      if (p.pattern !== group.pattern) return { groups: [] } as R;
      return { groups: [{ ...group, records: [loc('episode-2/bob/bob.log', 4), loc('episode-2/bob/bob.log', 9)] }] } as R;
    },
  };
  const list = await listGroups(sender, { episode: 'episode-2', minLevel: 'WARN' });
  assert.deepEqual(list.groups[0].records, []);
  const recs = await groupRecords(sender, { episode: 'episode-2', minLevel: 'WARN' }, list.groups[0]);
  assert.deepEqual(recs?.map((l) => l.range.start.line), [4, 9]);
  assert.deepEqual(seen, [
    ['run/failures', { episode: 'episode-2', minLevel: 'WARN', maxRecords: 0 }],
    ['run/failures', { episode: 'episode-2', minLevel: 'WARN', pattern: 'Timeout after <n> ms' }],
  ]);
  // A group the run no longer has: undefined (the list is stale).
  assert.equal(await groupRecords(sender, {}, { ...group, pattern: 'gone <n>' }), undefined);
  // A group that came with its records (a server without maxRecords) asks nothing.
  seen.length = 0;
  const given = { ...group, records: [loc('episode-2/bob/bob.log', 1)] };
  assert.deepEqual(await groupRecords(sender, {}, given), given.records);
  assert.deepEqual(seen, []);
});
