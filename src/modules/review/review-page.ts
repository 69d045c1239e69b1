import { Inject, Injectable } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServedModel } from 'src/modules/model';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';

/** What the page is told about the server (rendered into review.html). */
export interface ReviewPageConfig {
  /** The OpenID Connect issuer whose tokens /api/graphql accepts; null: none configured. */
  readonly issuer: string | null;
  /** Assistant id of the served model (the page's default filter), or null. */
  readonly assistantId: string | null;
}

/** The files under `assets/`: a fixed list, nothing else is served from disk. */
const ASSETS: Readonly<Record<string, string>> = {
  'review.js': 'text/javascript',
  'review.css': 'text/css',
};

const CONFIG_PLACEHOLDER = '{{PAGE_CONFIG}}';

/** The conversation review page and its assets, read once at start. */
@Injectable()
export class ReviewPage {
  private readonly template: string;
  private readonly assets = new Map<string, { body: Buffer; type: string }>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly served: ServedModel,
  ) {
    this.template = readFileSync(join(__dirname, 'page', 'review.html'), 'utf8');
    for (const [name, type] of Object.entries(ASSETS)) {
      this.assets.set(name, { body: readFileSync(join(__dirname, 'page', name)), type });
    }
  }

  pageConfig(): ReviewPageConfig {
    return {
      issuer: this.config.oidc.issuerUrl,
      assistantId: this.served.current()?.assistantId ?? null,
    };
  }

  /**
   * The Content-Security-Policy of the page: its own origin, plus the issuer's origin for
   * discovery and the token request (the token endpoint must be on the issuer's origin).
   */
  contentSecurityPolicy(): string {
    const issuer = this.config.oidc.issuerUrl;
    const idp = issuer === null ? '' : ` ${originOf(issuer)}`;
    return [
      "default-src 'self'",
      `connect-src 'self'${idp}`,
      "img-src 'self' data:",
      "style-src 'self'",
      "script-src 'self'",
      "form-action 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; ');
  }

  html(): string {
    return this.template.replace(
      CONFIG_PLACEHOLDER,
      escapeAttribute(JSON.stringify(this.pageConfig())),
    );
  }

  asset(name: string): { body: Buffer; type: string } | null {
    return this.assets.get(name) ?? null;
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

function escapeAttribute(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}
