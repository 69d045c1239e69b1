import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface EmbeddedIdpOptions {
  readonly realm: string;
  /** Keycloak realm export (clients, secrets, service-account roles; `${ENV}` placeholders). */
  readonly realmFile: string;
  /** Where the signing keys are kept (created on first start). */
  readonly keysFile: string;
  readonly port: number;
  /** Interface to listen on (default 127.0.0.1: a development provider stays on loopback). */
  readonly host?: string;
  /** Host name in the issuer URL (default localhost). */
  readonly publicHost?: string;
  /** Environment for placeholders (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  readonly onLog?: (line: string) => void;
  /**
   * How long the provider may take to listen (default 60 s). It loads oidc-provider and makes
   * its keys on first start: about a second on an idle machine, many more on a loaded one.
   */
  readonly readyTimeoutMs?: number;
}

export interface EmbeddedIdpHandle {
  /** `http://<host>:<port>/auth/realms/<realm>`: the `iss` of its tokens. */
  readonly issuer: string;
  readonly port: number;
  readonly clients: readonly string[];
  stop(): Promise<void>;
}

/** provider.mjs beside this file (src/ under jest, dist/ once built). */
function childPath(): string {
  const here = join(__dirname, 'provider.mjs');
  if (existsSync(here)) return here;
  return join(
    __dirname,
    '..',
    '..',
    '..',
    '..',
    '..',
    'src',
    'modules',
    'auth',
    'oidc',
    'embedded-idp',
    'provider.mjs',
  );
}

/**
 * Starts the embedded OpenID Connect provider (oidc-provider, ESM-only) in a child process and
 * resolves once it listens. It exits with Parley (IPC disconnect) or on stop().
 */
export function startEmbeddedIdp(options: EmbeddedIdpOptions): Promise<EmbeddedIdpHandle> {
  const child = fork(childPath(), [], {
    env: {
      ...(options.env ?? process.env),
      PARLEY_IDP_OPTIONS: JSON.stringify({
        realm: options.realm,
        realmFile: options.realmFile,
        keysFile: options.keysFile,
        port: options.port,
        host: options.host ?? '127.0.0.1',
        publicHost: options.publicHost ?? 'localhost',
      }),
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const output: string[] = [];
  const collect = (chunk: Buffer): void => {
    for (const line of chunk.toString().split('\n')) {
      if (line.trim() === '' || /^\s+at /.test(line)) continue;
      output.push(line);
      options.onLog?.(line);
    }
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);

  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        resolve();
        return;
      }
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 3_000).unref();
    });

  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      const state = child.exitCode === null ? `process ${child.pid} still running` : 'exited';
      void stop();
      reject(
        new Error(
          `embedded identity provider did not start in ${readyTimeoutMs / 1000} s (${state}): ${output.join(' | ') || 'no output'}`,
        ),
      );
    }, readyTimeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`embedded identity provider exited (${code}): ${output.join(' | ')}`));
    });
    child.on(
      'message',
      (message: {
        ready?: boolean;
        issuer?: string;
        port?: number;
        clients?: string[];
        error?: string;
      }) => {
        if (message.ready !== true || typeof message.issuer !== 'string') return;
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({
          issuer: message.issuer,
          port: message.port ?? 0,
          clients: message.clients ?? [],
          stop,
        });
      },
    );
  });
}
