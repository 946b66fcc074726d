// The TextMate grammars' record patterns, checked with JavaScript regular expressions
// (the patterns use only syntax Oniguruma and JavaScript read alike) against every
// line of the sample run's record files.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '../../..');
const sampleRun = process.env.RUNLS_SAMPLE_RUN ?? path.resolve(root, '../../testdata/sample-run');

function grammar(kind: string) {
  const g = JSON.parse(fs.readFileSync(path.join(root, 'syntaxes', `runls-${kind}.tmLanguage.json`), 'utf8'));
  return g.patterns.map((p: { match: string }) => new RegExp(p.match));
}

function recordFiles(dir: string, ext: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...recordFiles(p, ext));
    else if (e.name.endsWith(ext)) out.push(p);
  }
  return out;
}

test('a fielded log line splits into timestamp, level, state, conversation, agent, message', () => {
  const [record] = grammar('log');
  const m = record.exec('2026-10-21 18:01:02.310 ERROR [running] [conv-1] Bob migration dry-run failed');
  assert.ok(m);
  assert.deepEqual([m[1], m[2], m[4], m[7], m[9], m[10]], ['2026-10-21 18:01:02.310', 'ERROR', 'running', 'conv-1', 'Bob', ' migration dry-run failed']);
  const u = record.exec('2026-10-20 09:03:15,880 WARN  [running] Alice hotel search API answered slowly (4.2 s)');
  assert.ok(u);
  assert.deepEqual([u[2], u[4], u[7], u[9]], ['WARN ', 'running', undefined, 'Alice']);
});

test('a history line, fielded and not', () => {
  const [record] = grammar('history');
  const m = record.exec('2026-10-21 18:00:02 [running] [conv-1] Alice was told: Deploy the billing service');
  assert.ok(m);
  assert.deepEqual([m[1], m[3], m[6], m[8], m[9]], ['2026-10-21 18:00:02', 'running', 'conv-1', 'Alice', ' was told: Deploy the billing service']);
  const u = record.exec('2026-10-20 09:00:00 [running] Alice has started episode 1.');
  assert.ok(u);
  assert.equal(u[6], undefined);
  assert.equal(u[8], 'Alice');
});

test('every line of the sample run is a record, an indented continuation, or an unindented one', { skip: !fs.existsSync(sampleRun) && 'no sample run' }, () => {
  for (const kind of ['history', 'log']) {
    const [record, indented, unindented] = grammar(kind);
    const files = recordFiles(sampleRun, `.${kind}`);
    assert.ok(files.length > 0);
    for (const f of files) {
      for (const line of fs.readFileSync(f, 'utf8').split(/\r?\n/)) {
        if (line.trim() === '') continue;
        const ok = record.test(line) || indented.test(line) || unindented.test(line);
        assert.ok(ok, `${f}: ${line}`);
        if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/.test(line)) assert.ok(record.test(line), `not a record: ${f}: ${line}`);
      }
    }
  }
});
