import { Inject, Injectable } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type ChannelSetup, channelSetupOf } from 'src/modules/channels';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';

/** What the page needs to know about its channel (rendered into inspect.html). */
export interface PageConfig {
  readonly channel: string;
  /** The chat of a socket.io channel; other channels get a transcript of their conversations. */
  readonly chat: null | {
    readonly path: string;
    readonly namespace: string | null;
    readonly userMessageEvt: string;
    readonly botMessageEvt: string;
    readonly sessionPersistence: boolean;
  };
}

/** The files under `assets/`: a fixed list, nothing else is served from disk. */
const ASSETS: Readonly<Record<string, { readonly file: string; readonly type: string }>> = {
  'inspector.js': { file: join(__dirname, 'page', 'inspector.js'), type: 'text/javascript' },
  'inspector.css': { file: join(__dirname, 'page', 'inspector.css'), type: 'text/css' },
  // The socket.io server package ships its browser client: served from there, no CDN.
  'socket.io.min.js': {
    file: join(dirname(require.resolve('socket.io')), '..', 'client-dist', 'socket.io.min.js'),
    type: 'text/javascript',
  },
};

const CONFIG_PLACEHOLDER = '{{PAGE_CONFIG}}';

/**
 * The inspector's pages: one per input channel of the server (`rest` always, and every channel
 * of credentials.yml), each at `/webhooks/<channel>/inspect.html` with its `assets/`.
 */
@Injectable()
export class InspectorPages {
  private readonly configs = new Map<string, PageConfig>();
  private readonly template: string;
  private readonly assets = new Map<string, { body: Buffer; type: string }>();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    for (const c of pageConfigs(channelSetupOf(config))) this.configs.set(c.channel, c);
    this.template = readFileSync(join(__dirname, 'page', 'inspect.html'), 'utf8');
    for (const [name, asset] of Object.entries(ASSETS)) {
      this.assets.set(name, { body: readFileSync(asset.file), type: asset.type });
    }
  }

  /** The channels with a page, in configuration order. */
  channels(): string[] {
    return [...this.configs.keys()];
  }

  has(channel: string): boolean {
    return this.configs.has(channel);
  }

  /** inspect.html of a channel, with its configuration in a meta element. */
  html(channel: string): string | null {
    const config = this.configs.get(channel);
    if (config === undefined) return null;
    return this.template.replace(CONFIG_PLACEHOLDER, escapeAttribute(JSON.stringify(config)));
  }

  asset(name: string): { body: Buffer; type: string } | null {
    return this.assets.get(name) ?? null;
  }
}

/** `rest` (always served) first, then every configured channel, each once. */
export function pageConfigs(setup: ChannelSetup): PageConfig[] {
  const pages: PageConfig[] = [{ channel: 'rest', chat: null }];
  for (const c of setup.channels) {
    if (c.name === 'rest') continue;
    pages.push({
      channel: c.name,
      chat:
        c.kind === 'socketio'
          ? {
              path: c.settings.socketioPath,
              namespace: c.settings.namespace,
              userMessageEvt: c.settings.userMessageEvt,
              botMessageEvt: c.settings.botMessageEvt,
              sessionPersistence: c.settings.sessionPersistence,
            }
          : null,
    });
  }
  return pages;
}

function escapeAttribute(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}
