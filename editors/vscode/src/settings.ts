// The extension's settings and what the server receives of them (spec §9: under the
// key `runls` in initializationOptions and workspace/didChangeConfiguration).

import type { SearchParams } from './protocol';

export type Masking = 'off' | 'hidingOutside';
export type Scope = 'run' | 'episode';

export interface InterpreterRule {
  match: string;
  reading: 'note' | 'told' | 'said' | 'leftOut';
}

/** The settings the server knows, as the server spells them. */
export interface ServerSettings {
  agent: string;
  episode: string;
  conversation: string;
  scope: Scope;
  topK: number;
  masking: Masking;
  interpreter: { rules: InterpreterRule[] } | null;
  maxDiagnosticsPerFile: number;
  /**
   * Diagnostic codes left out (runls' own setting, spec §9 rev 3). Sent only when set:
   * a server before it names an unknown key as ignored.
   */
  ignoreDiagnostics?: string[];
}

/** Reads one setting; a thin view of vscode.WorkspaceConfiguration, so tests need no VS Code. */
export interface ConfigReader {
  get<T>(key: string): T | undefined;
}

export const DEFAULTS: ServerSettings = {
  agent: '',
  episode: '',
  conversation: '',
  scope: 'run',
  topK: 5,
  masking: 'off',
  interpreter: null,
  maxDiagnosticsPerFile: 200,
};

/**
 * Reads the `runls.*` settings the server understands, with defaults for the unset
 * ones and trimmed ids. Values of the wrong type fall back to the default rather than
 * reaching the server as nonsense; out-of-range values are passed on so the server's
 * error names the field.
 */
export function readServerSettings(cfg: ConfigReader): ServerSettings {
  const str = (k: keyof ServerSettings): string => {
    const v = cfg.get<unknown>(k);
    return typeof v === 'string' ? v.trim() : (DEFAULTS[k] as string);
  };
  const num = (k: 'topK' | 'maxDiagnosticsPerFile'): number => {
    const v = cfg.get<unknown>(k);
    return typeof v === 'number' && Number.isFinite(v) ? v : DEFAULTS[k];
  };
  const scope = str('scope');
  const masking = str('masking');
  const interp = cfg.get<unknown>('interpreter');
  return {
    agent: str('agent'),
    episode: str('episode'),
    conversation: str('conversation'),
    scope: (scope === '' ? DEFAULTS.scope : scope) as Scope,
    topK: num('topK'),
    masking: (masking === '' ? DEFAULTS.masking : masking) as Masking,
    interpreter: isInterpreter(interp) ? interp : null,
    maxDiagnosticsPerFile: num('maxDiagnosticsPerFile'),
    ...ignored(cfg.get<unknown>('ignoreDiagnostics')),
  };
}

/** The chat context a search is asked in; the pickers keep it apart from the settings. */
export const CONTEXT_KEYS = ['agent', 'episode', 'conversation', 'scope'] as const;
export type ContextKey = (typeof CONTEXT_KEYS)[number];

/**
 * The context the pickers chose, kept in the extension's workspace state (not in the
 * run folder's .vscode/settings.json: a run is the agents' data, maybe read-only or
 * shared). A key that was never picked is absent and the setting's value holds.
 */
export type StoredContext = Partial<Record<ContextKey, string>>;

/** The settings with the picked context laid over them. */
export function withContext(s: ServerSettings, stored: StoredContext): ServerSettings {
  const out = { ...s };
  for (const k of CONTEXT_KEYS) {
    const v = stored[k];
    if (typeof v !== 'string') continue;
    if (k === 'scope') out.scope = v === 'episode' ? 'episode' : 'run';
    else out[k] = v.trim();
  }
  return out;
}

/** The initializationOptions of the initialize request. */
export function initializationOptions(s: ServerSettings): { runls: ServerSettings } {
  return { runls: { ...s } };
}

/** The params of workspace/didChangeConfiguration. */
export function didChangeConfigurationParams(s: ServerSettings): { settings: { runls: ServerSettings } } {
  return { settings: { runls: { ...s } } };
}

/** The run/search params for a query under the current settings. */
export function searchParams(query: string, s: ServerSettings): SearchParams {
  return {
    query,
    agent: s.agent,
    episode: s.episode,
    conversation: s.conversation,
    scope: s.scope,
    topK: s.topK,
  };
}

/**
 * Whether the chat context lets record files give evidence (spec §5 rule 2: they need
 * both a current episode and a conversation id).
 */
export function contextMissing(s: ServerSettings): Array<'episode' | 'conversation'> {
  const missing: Array<'episode' | 'conversation'> = [];
  if (s.episode === '') missing.push('episode');
  if (s.conversation === '') missing.push('conversation');
  return missing;
}

function ignored(v: unknown): { ignoreDiagnostics?: string[] } {
  return Array.isArray(v) ? { ignoreDiagnostics: v.filter((c): c is string => typeof c === 'string') } : {};
}

function isInterpreter(v: unknown): v is { rules: InterpreterRule[] } {
  return typeof v === 'object' && v !== null && Array.isArray((v as { rules?: unknown }).rules);
}
