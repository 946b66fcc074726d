import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { findServer, resolveServerPath, SECOND_LOOK_MS, ServerNotFound, settingOrigins } from '../../src/serverPath';

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

/**
 * A start's view of the setting: `values` are what each read of runls.server.path
 * gives (an empty one with nothing on PATH: not found). `sleep` waits until `wake`;
 * `change` fires the configuration change listener.
 */
function lookup(values: string[]) {
  const reads: string[] = [];
  let listener: (() => void) | undefined;
  let disposed = 0;
  let slept: number | undefined;
  let wake: (() => void) | undefined;
  const found = findServer(
    () => {
      const v = values.shift() ?? '';
      reads.push(v);
      return resolveServerPath(v, env({ PATH: '/usr/bin' }));
    },
    {
      onChange: (l) => {
        listener = l;
        return { dispose: () => disposed++ };
      },
      sleep: (ms) => {
        slept = ms;
        return new Promise<void>((r) => (wake = r));
      },
    },
  );
  return { found, reads, wake: () => wake?.(), change: () => listener?.(), disposed: () => disposed, slept: () => slept };
}

test('a server found at once: one read, no wait', async () => {
  const l = lookup(['/opt/r/runls']);
  assert.deepEqual(await l.found, { path: '/opt/r/runls', source: 'setting' });
  assert.deepEqual(l.reads, ['/opt/r/runls']);
  assert.equal(l.slept(), undefined);
});

test('no server at the start: the setting is read again after a short delay and the server started then', async () => {
  const l = lookup(['', '/opt/r/runls']);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(l.reads, [''], 'not found yet: waiting');
  assert.equal(l.slept(), SECOND_LOOK_MS);
  l.wake();
  assert.deepEqual(await l.found, { path: '/opt/r/runls', source: 'setting' });
  assert.equal(l.reads.length, 2);
  assert.equal(l.disposed(), 1, 'the change listener is let go');
});

test('no server at the start: the first configuration change reads it again without waiting out the delay', async () => {
  const l = lookup(['', '/opt/r/runls']);
  await new Promise((r) => setImmediate(r));
  l.change();
  assert.deepEqual(await l.found, { path: '/opt/r/runls', source: 'setting' });
  assert.equal(l.disposed(), 1);
});

test('still no server at the second look: the not-found error, after two reads only', async () => {
  const l = lookup(['', '']);
  await new Promise((r) => setImmediate(r));
  l.wake();
  await assert.rejects(l.found, (e: Error) => e instanceof ServerNotFound && /no runls is on PATH/.test(e.message));
  l.change(); // a later change is not this start's business (a changed server.path restarts)
  assert.equal(l.reads.length, 2);
});

test('the log names where the setting was read from, and the other settings the user settings gave', () => {
  assert.equal(
    settingOrigins({ globalValue: '/opt/r/runls' }, ['runls.topK']),
    'user "/opt/r/runls", workspace (none), folder (none); other settings with a user value: runls.topK',
  );
  assert.equal(settingOrigins(undefined, []), 'user (none), workspace (none), folder (none); other settings with a user value: none');
});
