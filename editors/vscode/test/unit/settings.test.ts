import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  contextMissing,
  DEFAULTS,
  didChangeConfigurationParams,
  initializationOptions,
  readServerSettings,
  searchParams,
} from '../../src/settings';

function reader(values: Record<string, unknown>) {
  return { get: <T>(k: string) => values[k] as T | undefined };
}

test('unset settings read as the server defaults', () => {
  assert.deepEqual(readServerSettings(reader({})), DEFAULTS);
});

test('settings map to initializationOptions under the key runls', () => {
  const rules = [{ match: '^(?P<agent>\\S+) said: (?P<text>(?s).*)$', reading: 'said' }];
  const s = readServerSettings(
    reader({
      agent: ' alice ',
      episode: 'episode-2',
      conversation: 'conv-1',
      scope: 'episode',
      topK: 12,
      masking: 'hidingOutside',
      interpreter: { rules },
      maxDiagnosticsPerFile: 50,
      'server.path': '/opt/runls', // not a server setting: never sent
      'trace.server': 'verbose',
    }),
  );
  assert.deepEqual(initializationOptions(s), {
    runls: {
      agent: 'alice',
      episode: 'episode-2',
      conversation: 'conv-1',
      scope: 'episode',
      topK: 12,
      masking: 'hidingOutside',
      interpreter: { rules },
      maxDiagnosticsPerFile: 50,
    },
  });
  assert.deepEqual(didChangeConfigurationParams(s), { settings: initializationOptions(s) });
});

test('ignoreDiagnostics is sent only when set (an empty list clears it)', () => {
  assert.equal('ignoreDiagnostics' in readServerSettings(reader({})), false);
  assert.deepEqual(readServerSettings(reader({ ignoreDiagnostics: ['unindented-continuation', 3] })).ignoreDiagnostics, ['unindented-continuation']);
  assert.deepEqual(initializationOptions(readServerSettings(reader({ ignoreDiagnostics: [] }))).runls.ignoreDiagnostics, []);
});

test('values of the wrong type fall back to defaults; out-of-range ones pass for the server to name', () => {
  const s = readServerSettings(reader({ topK: 'ten', agent: 3, interpreter: 'rules.json', maxDiagnosticsPerFile: 0, scope: '' }));
  assert.equal(s.topK, 5);
  assert.equal(s.agent, '');
  assert.equal(s.interpreter, null);
  assert.equal(s.maxDiagnosticsPerFile, 0);
  assert.equal(s.scope, 'run');
  assert.equal(readServerSettings(reader({ topK: 5000 })).topK, 5000);
});

test('search params carry the query and the chat context', () => {
  const s = { ...DEFAULTS, agent: 'bob', episode: 'episode-3', conversation: 'conv-4', topK: 7 };
  assert.deepEqual(searchParams('migration failed', s), {
    query: 'migration failed',
    agent: 'bob',
    episode: 'episode-3',
    conversation: 'conv-4',
    scope: 'run',
    topK: 7,
  });
});

test('the search asks for the context when episode or conversation is unset', () => {
  assert.deepEqual(contextMissing(DEFAULTS), ['episode', 'conversation']);
  assert.deepEqual(contextMissing({ ...DEFAULTS, episode: 'episode-2' }), ['conversation']);
  assert.deepEqual(contextMissing({ ...DEFAULTS, episode: 'episode-2', conversation: 'conv-1' }), []);
});
