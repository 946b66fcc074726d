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
