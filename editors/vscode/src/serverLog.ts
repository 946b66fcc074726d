// The server's stderr lines (zap's console encoder: time, LEVEL, message, fields, tab
// separated) read for the level they were logged at, so that the output channel shows
// each at its own level instead of every line as an error.

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const LEVELS: Record<string, LogLevel> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
  DPANIC: 'error',
  PANIC: 'error',
  FATAL: 'error',
};

/**
 * The level of a line and its text without the time and level (the channel writes its
 * own). A line that is not a log line (a panic's stack, say) is an error, as written.
 */
export function parseServerLine(line: string): { level: LogLevel; text: string } {
  const parts = line.split('\t');
  if (parts.length >= 3 && /^\d{4}-\d\d-\d\dT/.test(parts[0]) && LEVELS[parts[1]] !== undefined) {
    return { level: LEVELS[parts[1]], text: parts.slice(2).join(' ') };
  }
  return { level: 'error', text: line };
}
