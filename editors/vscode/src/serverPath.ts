// Finding the runls binary: the runls.server.path setting, else `runls` on PATH, else
// a message saying how to install it.

import * as path from 'node:path';

export interface Resolved {
  path: string;
  source: 'setting' | 'PATH';
}

export class ServerNotFound extends Error {}

export interface PathEnv {
  /** The PATH variable. */
  PATH?: string;
  /** The user's home, for a setting that starts with `~/`. */
  home?: string;
  /** The first workspace folder, for a relative setting. */
  workspaceFolder?: string;
  /** Whether a regular file at this absolute path can be executed. */
  isExecutable(p: string): boolean;
  /** Platform path separator of PATH (":" or ";"). */
  delimiter?: string;
  /** Executable suffixes tried on Windows. */
  exeSuffixes?: string[];
}

export const INSTALL_HINT =
  'Install it with `go install ./cmd/runls` from the runls repository (it lands in $(go env GOPATH)/bin), ' +
  'or set "runls.server.path" to the binary.';

/** Resolves the server binary, or throws ServerNotFound with what was tried and how to fix it. */
export function resolveServerPath(setting: string | undefined, env: PathEnv): Resolved {
  const configured = (setting ?? '').trim();
  if (configured !== '') {
    let p = configured;
    if ((p === '~' || p.startsWith('~/')) && env.home) p = path.join(env.home, p.slice(1));
    p = p.replace(/\$\{workspaceFolder\}/g, env.workspaceFolder ?? '');
    if (!isAbsolute(p)) {
      if (!env.workspaceFolder) {
        throw new ServerNotFound(`runls.server.path "${configured}" is relative and no folder is open. ${INSTALL_HINT}`);
      }
      p = path.resolve(env.workspaceFolder, p);
    }
    if (!env.isExecutable(p)) {
      throw new ServerNotFound(`runls.server.path "${configured}" is not an executable file (${p}). ${INSTALL_HINT}`);
    }
    return { path: p, source: 'setting' };
  }
  const dirs = (env.PATH ?? '').split(env.delimiter ?? path.delimiter).filter((d) => d !== '');
  const suffixes = env.exeSuffixes ?? [''];
  for (const dir of dirs) {
    if (!isAbsolute(dir)) continue; // a relative PATH entry would depend on the cwd
    for (const suffix of suffixes) {
      const candidate = path.join(dir, 'runls' + suffix);
      if (env.isExecutable(candidate)) return { path: candidate, source: 'PATH' };
    }
  }
  throw new ServerNotFound(`The runls server was not found: "runls.server.path" is empty and no runls is on PATH. ${INSTALL_HINT}`);
}

function isAbsolute(p: string): boolean {
  return path.isAbsolute(p) || /^[A-Za-z]:[\\/]/.test(p);
}

/** How long a start that found no server waits before it reads the setting again. */
export const SECOND_LOOK_MS = 2000;

/**
 * Finds the server for a start. When `find` (the setting, then PATH) finds none, it
 * looks once more: after `delayMs`, or at the first configuration change, whichever
 * comes first. A window's settings may reach the extension after it activated (a
 * settings file read late, a folder's settings written as the window opens); one
 * second look turns that into a late start instead of an error that stays.
 * `retrying` is told the first miss (to say in the log what happens). A miss on the
 * second look throws its ServerNotFound; any other error is thrown at once.
 */
export async function findServer(
  find: () => Resolved,
  opts: {
    delayMs?: number;
    /** Calls `listener` at a configuration change; disposed after the second look. */
    onChange: (listener: () => void) => { dispose(): void };
    retrying?: (miss: ServerNotFound, delayMs: number) => void;
    sleep?: (ms: number) => Promise<void>;
  },
): Promise<Resolved> {
  const delayMs = opts.delayMs ?? SECOND_LOOK_MS;
  try {
    return find();
  } catch (e) {
    if (!(e instanceof ServerNotFound)) throw e;
    opts.retrying?.(e, delayMs);
  }
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let changed: (() => void) | undefined;
  const change = new Promise<void>((r) => (changed = r));
  const listening = opts.onChange(() => changed?.());
  try {
    await Promise.race([sleep(delayMs), change]);
  } finally {
    listening.dispose();
  }
  return find();
}

/**
 * A setting's value in each place VS Code reads it ("user (none), workspace "/x",
 * folder (none)"), from WorkspaceConfiguration.inspect, and which other settings of the
 * extension this window has a user value for: a server path missing from the user
 * settings while the others are there points at the setting's scope, all of them
 * missing at the user settings not read.
 */
export function settingOrigins(
  i: { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown } | undefined,
  othersWithUserValue: string[],
): string {
  const at = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v));
  const others = othersWithUserValue.length === 0 ? 'none' : othersWithUserValue.join(', ');
  return `user ${at(i?.globalValue)}, workspace ${at(i?.workspaceValue)}, folder ${at(i?.workspaceFolderValue)}; other settings with a user value: ${others}`;
}
