import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { failuresMessage, groupRows, recordRows } from '../../src/failures';
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
  assert.match(rows[0].tooltip, /120 records \(the first 2 listed\)/);
  assert.equal(rows[1].description, 'carol · episode-3');
  assert.deepEqual(recordRows(result.groups[0], root).map((r) => r.label), ['episode-2/bob/bob.log:5', 'episode-3/alice/alice.log:10']);
  assert.equal(failuresMessage(result, {}), '2 groups, 121 records (whole run · all agents · ERROR and up, and exceptions)');
  assert.equal(failuresMessage({ groups: [] }, { episode: 'episode-2', minLevel: 'WARN' }), '0 groups, 0 records (episode-2 · all agents · WARN and up, and exceptions)');
  const many = { groups: Array.from({ length: 200 }, () => result.groups[1]) };
  assert.equal(failuresMessage(many, {}), '200 groups (the most frequent), 200 records (whole run · all agents · ERROR and up, and exceptions)');
});
