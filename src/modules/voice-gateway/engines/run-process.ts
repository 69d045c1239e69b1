import { spawn } from 'node:child_process';

/**
 * Runs a program with an argument array (never through a shell), optionally writing `input` to
 * its stdin, and returns its stdout. Rejects with the program's stderr on a non-zero exit.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  input?: string,
  timeoutMs = 20_000,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], timeout: timeoutMs });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => reject(new Error(`${command}: ${error.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) resolve(Buffer.concat(out));
      else {
        const detail = Buffer.concat(err).toString('utf8').trim().slice(0, 300);
        reject(new Error(`${command} exited with ${code ?? signal}${detail ? `: ${detail}` : ''}`));
      }
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
  });
}
