import { createInterface } from 'node:readline';
import { type Readable, type Writable } from 'node:stream';
import { parseTextAwaitable } from 'src/core';
import { loadCliNlu } from './test.command';

/** Options of `parley shell nlu`, as commander hands them over. */
export interface ShellNluOptions {
  model?: string;
}

/**
 * `parley shell nlu`: reads messages line by line (a terminal or piped stdin) and prints the
 * parse result of each as JSON, one result per line; ends at end of input.
 */
export async function shellNlu(
  opts: ShellNluOptions,
  input: Readable = process.stdin,
  output: Writable = process.stdout,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<void> {
  const { path, nlu } = await loadCliNlu(opts.model);
  log(`NLU model loaded from ${path}. Type a message and press enter (end with Ctrl-D).`);
  for (const notice of nlu.notices) log(`warning: ${notice}`);
  const lines = createInterface({ input, terminal: false, crlfDelay: Infinity });
  for await (const line of lines) {
    const text = line.trim();
    if (text === '') continue;
    const parsed = await parseTextAwaitable(nlu, text, { onWarning: log });
    output.write(`${JSON.stringify(parsed)}\n`);
  }
}
