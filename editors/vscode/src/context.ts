// Choosing the chat context (agent, episode, conversation) from what the run holds
// (run/info), as QuickPick items. Pure; the extension shows them and saves the choice.

import type { RunInfo } from './protocol';

export interface ContextPick {
  label: string;
  description?: string;
  detail?: string;
  /** The setting's new value; "" unsets it. */
  value: string;
  picked?: boolean;
}

export function agentPicks(info: RunInfo, current: string): ContextPick[] {
  const picks: ContextPick[] = [
    { label: '$(organization) All agents', description: 'search every agent of the run', value: '' },
  ];
  for (const a of info.agents) {
    const eps = info.episodes.filter((e) => e.agents.includes(a)).map((e) => e.episode);
    picks.push({ label: `$(person) ${a}`, description: eps.join(', '), value: a });
  }
  return markCurrent(picks, current);
}

export function episodePicks(info: RunInfo, current: string): ContextPick[] {
  const picks: ContextPick[] = info.episodes.map((e) => ({
    label: `$(history) ${e.episode}`,
    description: describeEpisode(e.agents, e.conversations),
    value: e.episode,
  }));
  picks.push({ label: '$(close) No episode', description: 'record files give no evidence', value: '' });
  return markCurrent(picks, current);
}

/** Conversations of `episode`; empty when the episode is unknown or has none. */
export function conversationPicks(info: RunInfo, episode: string, current: string): ContextPick[] {
  const ep = info.episodes.find((e) => e.episode === episode);
  const picks: ContextPick[] = [...(ep?.conversations ?? [])].sort(naturalCompare).map((c) => ({
    label: `$(comment-discussion) ${c}`,
    value: c,
  }));
  picks.push({ label: '$(close) No conversation', description: 'record files give no evidence', value: '' });
  return markCurrent(picks, current);
}

export function scopePicks(current: string): ContextPick[] {
  return markCurrent(
    [
      { label: '$(globe) run', description: 'every episode of the run', value: 'run' },
      { label: '$(history) episode', description: 'the current episode only', value: 'episode' },
    ],
    current || 'run',
  );
}

/**
 * Orders ids as people read them: runs of digits by their number, so conv-2 comes
 * before conv-10; the rest by UTF-16 code units (the server's byte-wise order for
 * ASCII), and equal-looking numbers (07 and 7) by their text.
 */
export function naturalCompare(a: string, b: string): number {
  const re = /(\d+)|(\D+)/g;
  const pa = a.match(re) ?? [];
  const pb = b.match(re) ?? [];
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    const dx = /^\d/.test(x);
    const dy = /^\d/.test(y);
    if (dx && dy) {
      const nx = x.replace(/^0+(?=\d)/, '');
      const ny = y.replace(/^0+(?=\d)/, '');
      if (nx.length !== ny.length) return nx.length - ny.length;
      if (nx !== ny) return nx < ny ? -1 : 1;
    }
    if (x !== y) return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

function describeEpisode(agents: string[], conversations: string[]): string {
  const a = agents.length === 0 ? 'no agents' : agents.join(', ');
  const c = conversations.length === 0 ? 'no conversations' : `${conversations.length} conversation${conversations.length === 1 ? '' : 's'}`;
  return `${a} · ${c}`;
}

function markCurrent(picks: ContextPick[], current: string): ContextPick[] {
  for (const p of picks) {
    if (p.value === current) {
      p.picked = true;
      p.description = p.description ? `${p.description} · current` : 'current';
    }
  }
  // A set value comes first, so Enter keeps it; "unset" stays last, so Enter on an
  // unset context takes the first real choice.
  if (current === '') return picks;
  return [...picks.filter((p) => p.picked), ...picks.filter((p) => !p.picked)];
}
