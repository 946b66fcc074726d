// The status bar's text: the server's state (fed by $/progress and the client's
// state) and the chat context the searches use.

import type { RunInfo } from './protocol';
import type { ServerSettings } from './settings';

export type ServerState =
  | { kind: 'starting' }
  | { kind: 'indexing'; percent?: number; message?: string }
  | { kind: 'ready' }
  | { kind: 'error'; message: string }
  | { kind: 'stopped' };

/** A $/progress value of the work-done kind (LSP WorkDoneProgressBegin/Report/End). */
export interface ProgressValue {
  kind: 'begin' | 'report' | 'end';
  title?: string;
  message?: string;
  percentage?: number;
}

/**
 * The state after a $/progress value. Progress arrives only while the server is up,
 * so it moves starting/ready to indexing and indexing back to ready; it never hides
 * an error.
 */
export function applyProgress(state: ServerState, p: ProgressValue): ServerState {
  if (state.kind === 'error' || state.kind === 'stopped') return state;
  switch (p.kind) {
    case 'begin':
      return { kind: 'indexing', percent: clampPercent(p.percentage), message: p.message ?? p.title };
    case 'report': {
      const prev = state.kind === 'indexing' ? state : { kind: 'indexing' as const };
      // LSP: percentages should rise and clients may ignore ones that do not; reports
      // can arrive out of order, so the bar never steps back.
      const pct = clampPercent(p.percentage);
      return {
        kind: 'indexing',
        percent: pct === undefined ? prev.percent : Math.max(pct, prev.percent ?? 0),
        message: p.message ?? prev.message,
      };
    }
    case 'end':
      return { kind: 'ready' };
    default:
      return state;
  }
}

export interface StatusView {
  text: string;
  tooltip: string;
  /** 'error' asks for the error background colour. */
  alert?: 'error' | 'warning';
}

/** One status bar item: server state, then the chat context; the tooltip adds what the run holds. */
export function statusView(state: ServerState, s: ServerSettings, info?: RunInfo): StatusView {
  const ctx = contextLabel(s);
  const run = info ? `\n\n${runOverview(info)}` : '';
  const scope = s.scope === 'episode' ? 'searches cover the current episode only' : 'searches cover every episode of the run';
  const tail = `${run}\n\nContext: ${ctx}: ${scope}\nClick to pick the agent, episode, conversation or scope.`;
  switch (state.kind) {
    case 'starting':
      return { text: `$(loading~spin) runls: starting`, tooltip: `runls server starting${tail}` };
    case 'indexing': {
      const pct = state.percent === undefined ? '' : ` ${Math.round(state.percent)}%`;
      return {
        text: `$(sync~spin) runls: indexing${pct}`,
        tooltip: `runls server indexing the run${pct}${state.message ? `: ${state.message}` : ''}${tail}`,
      };
    }
    case 'ready':
      return { text: `$(search) runls: ${ctx}`, tooltip: `runls server ready${tail}` };
    case 'error':
      return {
        text: `$(error) runls: error`,
        tooltip: `runls server error: ${state.message}\nRun "runls: Show Output" for the log, "runls: Restart Server" to try again.`,
        alert: 'error',
      };
    case 'stopped':
      return { text: `$(circle-slash) runls: stopped`, tooltip: `runls server stopped${tail}`, alert: 'warning' };
  }
}

/** What the run holds, from run/info: "Run: 12 files, 1.2 MB · 3 episodes · 2 agents (alice, bob)". */
export function runOverview(info: RunInfo): string {
  const n = (k: number, one: string) => `${k} ${one}${k === 1 ? '' : 's'}`;
  const agents = info.agents.length <= 5 ? ` (${info.agents.join(', ')})` : '';
  const indexing = info.indexing.done ? '' : ' so far (indexing)';
  return `Run: ${n(info.indexing.files, 'file')}, ${formatBytes(info.indexing.bytes)}${indexing} · ${n(info.episodes.length, 'episode')} · ${n(info.agents.length, 'agent')}${agents}`;
}

/** Bytes as people read them: 512 B, 1.2 KB, 3.4 MB, 1.1 GB (powers of 1000). */
export function formatBytes(b: number): string {
  if (b < 1000) return `${b} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = b;
  let u = -1;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

/**
 * "alice · episode-2 (scope: run) · conv-1", with "all agents" and "no
 * episode/conversation" for unset fields: the scope stands next to the episode, since
 * with scope run the results come from every episode, not only the one named.
 */
export function contextLabel(s: Pick<ServerSettings, 'agent' | 'episode' | 'conversation' | 'scope'>): string {
  const scope = `(scope: ${s.scope === 'episode' ? 'episode' : 'run'})`;
  return [s.agent || 'all agents', `${s.episode || 'no episode'} ${scope}`, s.conversation || 'no conversation'].join(' · ');
}

function clampPercent(p: number | undefined): number | undefined {
  if (typeof p !== 'number' || !Number.isFinite(p)) return undefined;
  return Math.min(100, Math.max(0, p));
}
