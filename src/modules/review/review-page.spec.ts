import type { ServedModel } from 'src/modules/model';
import type { AppConfig } from 'src/platform/config/app-config';
import { ReviewPage } from './review-page';

function pageWith(issuerUrl: string | null, assistantId: string | null): ReviewPage {
  const config = { oidc: { issuerUrl } } as unknown as AppConfig;
  const served = {
    current: () => (assistantId === null ? null : { assistantId }),
  } as unknown as ServedModel;
  return new ReviewPage(config, served);
}

function metaConfig(html: string): unknown {
  const match = /<meta name="parley-review" content="([^"]*)"/.exec(html);
  if (match === null) throw new Error('no page config in the page');
  const text = (match[1] ?? '')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
  return JSON.parse(text);
}

describe('ReviewPage', () => {
  it("allows connections to the page's origin and the issuer's origin only", () => {
    const page = pageWith('http://localhost:8081/auth/realms/parley', 'coffee_bar');
    const csp = page.contentSecurityPolicy();
    expect(csp).toContain("connect-src 'self' http://localhost:8081;");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    expect(metaConfig(page.html())).toEqual({
      issuer: 'http://localhost:8081/auth/realms/parley',
      assistantId: 'coffee_bar',
    });
  });

  it('without an issuer: only its own origin, and the page is told there is none', () => {
    const page = pageWith(null, null);
    expect(page.contentSecurityPolicy()).toContain("connect-src 'self';");
    expect(metaConfig(page.html())).toEqual({ issuer: null, assistantId: null });
  });

  it('escapes the configuration into the attribute', () => {
    const page = pageWith('http://idp.example/realms/a"b<c>', 'x&y');
    expect(metaConfig(page.html())).toEqual({
      issuer: 'http://idp.example/realms/a"b<c>',
      assistantId: 'x&y',
    });
  });

  it('serves its two assets and nothing else', () => {
    const page = pageWith(null, null);
    expect(page.asset('review.js')?.type).toBe('text/javascript');
    expect(page.asset('review.css')?.type).toBe('text/css');
    expect(page.asset('review.html')).toBeNull();
    expect(page.asset('../review-page.ts')).toBeNull();
  });
});
