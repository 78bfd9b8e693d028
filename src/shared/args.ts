// Command-line flags for every `test-inbox` command: node:util's parseArgs reads them, and each
// problem becomes a UsageError in the CLI's own words (naming the flag), never Node's message.

import { parseArgs } from 'node:util';
import { codedError } from '../core/errors';

/** A bad command line: the CLI prints the message and its usage text and exits EXIT_USAGE. */
export class UsageError extends codedError<'USAGE'>('UsageError') {
  constructor(message: string) {
    super('USAGE', message);
  }
}

export type FlagSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;

interface ParsedFlags {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/**
 * Reads `argv` against `spec`. Unknown flags, a string flag without a value (or whose next
 * word is another `--flag`), a value given to a boolean flag, and a flag given twice are
 * UsageErrors that name the flag.
 */
export function parseFlags(argv: string[], spec: FlagSpec): ParsedFlags {
  const { tokens } = parseArgs({ args: argv, options: spec, strict: false, allowPositionals: true, tokens: true });
  const values: ParsedFlags['values'] = {};
  const positionals: string[] = [];
  for (const t of tokens) {
    if (t.kind === 'positional') {
      positionals.push(t.value);
      continue;
    }
    if (t.kind !== 'option') continue;
    const flag = t.rawName.startsWith('--') ? t.rawName : `-${t.name}`;
    const s = Object.prototype.hasOwnProperty.call(spec, t.name) ? spec[t.name] : undefined;
    if (!s) throw new UsageError(`unknown option ${flag.split('=')[0]}`);
    if (values[t.name] !== undefined) throw new UsageError(`--${t.name} is given twice`);
    if (s.type === 'boolean') {
      if (t.value !== undefined) throw new UsageError(`--${t.name} takes no value`);
      values[t.name] = true;
      continue;
    }
    if (t.value === undefined || (!t.inlineValue && t.value.startsWith('--'))) {
      throw new UsageError(`--${t.name} needs a value${t.value === undefined ? '' : ` (to pass one that starts with --, write --${t.name}=${t.value})`}`);
    }
    values[t.name] = t.value;
  }
  return { values, positionals };
}
