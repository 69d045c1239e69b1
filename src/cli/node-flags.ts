import { spawn } from 'node:child_process';

/**
 * Node flags `parley run` runs under unless `PARLEY_NODE_FLAGS` names others (or `none`): a young
 * generation of 32 MB semi-spaces instead of Node's 16 MB. A turn allocates ~100 KB and keeps
 * its objects across the database round trip, so with the default size the scavenger runs
 * every ~150 turns and copies every turn in flight; twice the room halves the scavenges and
 * cost ~7–9 % less server CPU per turn in the dialogue bench (bench/dialogue.js). Larger sizes
 * gave nothing more: the parallel scavenge work grows with the space.
 */
export const DEFAULT_SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];

/** Set in the server process the launcher starts, so it never starts another one. */
export const NODE_FLAGS_APPLIED_ENV = 'PARLEY_NODE_FLAGS_APPLIED';

/** What the launcher does: run here, or start the server once more with these Node flags. */
export type LaunchPlan =
  | { readonly kind: 'here' }
  | { readonly kind: 'relaunch'; readonly flags: readonly string[] }
  | { readonly kind: 'invalid'; readonly message: string };

/**
 * Node reads heap-sizing flags only when it starts, so `parley run` started without them is
 * started again with them (the `node` it runs on, the same script and arguments). Nothing
 * happens for other commands, for `--help`, when the flags are already set (by `node <flags>`
 * or NODE_OPTIONS), under a debugger (`--inspect*`: its port is taken), in the relaunched
 * process itself, or when `PARLEY_NODE_FLAGS` is `none`.
 */
export function launchPlan(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  execArgv: readonly string[],
): LaunchPlan {
  if (args[0] !== 'run' || args.includes('--help') || args.includes('-h')) return HERE;
  if (env[NODE_FLAGS_APPLIED_ENV] === '1') return HERE;
  const given = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean)];
  if (given.some((a) => a.startsWith('--inspect'))) return HERE;
  // Unset or empty (as every setting of .env.example): the defaults; `none`: Node's own.
  const configured = (env.PARLEY_NODE_FLAGS ?? '').trim();
  if (configured === 'none') return HERE;
  const wanted =
    configured === '' ? DEFAULT_SERVER_NODE_FLAGS : configured.split(/\s+/).filter(Boolean);
  const bad = wanted.find((f) => !/^--[a-z0-9][a-z0-9-]*(=\S+)?$/i.test(f));
  if (bad !== undefined) {
    return {
      kind: 'invalid',
      message: `PARLEY_NODE_FLAGS: '${bad}' is not a Node flag (expected --name or --name=value)`,
    };
  }
  const nameOf = (flag: string): string => (flag.split('=')[0] as string).replace(/_/g, '-');
  const missing = wanted.filter((f) => !given.some((g) => nameOf(g) === nameOf(f)));
  return missing.length > 0 ? { kind: 'relaunch', flags: missing } : HERE;
}

const HERE: LaunchPlan = { kind: 'here' };

/** Signals the launcher passes on to the server (which stops cleanly on each, once). */
const RELAYED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Starts `script args` again under `flags` and stands in for it: signals are passed on, and
 * the launcher exits as the server does (same code, or the same signal).
 */
export function relaunch(flags: readonly string[], script: string, args: readonly string[]): void {
  const child = spawn(process.execPath, [...process.execArgv, ...flags, script, ...args], {
    stdio: 'inherit',
    env: { ...process.env, [NODE_FLAGS_APPLIED_ENV]: '1' },
  });
  const relay = (signal: NodeJS.Signals): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const s of RELAYED_SIGNALS) process.on(s, relay);
  child.once('error', (error) => {
    process.stderr.write(`parley: could not start the server process: ${error.message}\n`);
    process.exit(1);
  });
  child.once('exit', (code, signal) => {
    for (const s of RELAYED_SIGNALS) process.off(s, relay);
    if (signal !== null) {
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}

/**
 * In a server the launcher started: calls `onGone` once the launcher is gone (killed with
 * SIGKILL, which it cannot pass on), so the server does not run on orphaned. Checked every
 * `everyMs` on a timer that keeps no process alive.
 */
export function watchLauncher(onGone: () => void, everyMs = 1000): void {
  if (process.env[NODE_FLAGS_APPLIED_ENV] !== '1') return;
  const launcher = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== launcher) {
      clearInterval(timer);
      onGone();
    }
  }, everyMs);
  timer.unref();
}
