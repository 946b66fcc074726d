import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { resolveServerPath, ServerNotFound } from '../../src/serverPath';

const exes = new Set(['/usr/local/bin/runls', '/home/u/go/bin/runls', '/work/run/bin/runls', '/opt/r/runls']);
const env = (over: object = {}) => ({
  PATH: '/usr/bin:/usr/local/bin',
  home: '/home/u',
  workspaceFolder: '/work/run',
  delimiter: ':',
  isExecutable: (p: string) => exes.has(p),
  ...over,
});

test('the setting wins over PATH', () => {
  assert.deepEqual(resolveServerPath('/opt/r/runls', env()), { path: '/opt/r/runls', source: 'setting' });
});

test('~ and relative settings are resolved against home and the workspace folder', () => {
  assert.equal(resolveServerPath('~/go/bin/runls', env()).path, '/home/u/go/bin/runls');
  assert.equal(resolveServerPath('bin/runls', env()).path, '/work/run/bin/runls');
  assert.equal(resolveServerPath('${workspaceFolder}/bin/runls', env()).path, '/work/run/bin/runls');
});

test('a setting that is not an executable is an error naming it, not a silent fallback', () => {
  assert.throws(() => resolveServerPath('/nope/runls', env()), (e: Error) => e instanceof ServerNotFound && /\/nope\/runls/.test(e.message) && /go install \.\/cmd\/runls/.test(e.message));
});

test('empty setting: first runls on PATH; relative PATH entries are skipped', () => {
  assert.deepEqual(resolveServerPath('', env()), { path: '/usr/local/bin/runls', source: 'PATH' });
  assert.deepEqual(resolveServerPath('  ', env({ PATH: 'bin:/home/u/go/bin' })), { path: '/home/u/go/bin/runls', source: 'PATH' });
});

test('nothing found: a message saying how to install it', () => {
  assert.throws(() => resolveServerPath(undefined, env({ PATH: '/usr/bin' })), /no runls is on PATH.*go install \.\/cmd\/runls/);
});

test('Windows suffixes are tried', () => {
  const r = resolveServerPath('', { PATH: 'C:\\go\\bin', delimiter: ';', exeSuffixes: ['.exe', ''], isExecutable: (p: string) => p.endsWith('runls.exe') });
  assert.equal(r.path.endsWith('runls.exe'), true);
});
