import type { Request } from 'express';
import { createHmac } from 'node:crypto';
import { badSignature, rawBody } from 'src/modules/channels/connector/connector';
import { safeEqual } from 'src/modules/channels/connector/signature';

/** The fields of a form-encoded body, in the order sent (a repeated field once per value). */
export type FormParams = ReadonlyArray<readonly [string, string]>;

/** Parses an `application/x-www-form-urlencoded` body (what Twilio POSTs to a webhook). */
export function formParams(raw: Buffer): FormParams {
  return [...new URLSearchParams(raw.toString('utf8'))];
}

/** The first value of a form field, or null. */
export function formField(params: FormParams, name: string): string | null {
  return params.find(([k]) => k === name)?.[1] ?? null;
}

/**
 * Twilio's request signature (`X-Twilio-Signature`): the base64 HMAC-SHA1, keyed with the
 * account's auth token, of the full URL Twilio requested (scheme, host, path and query) followed
 * by every POST field as `<name><value>`, the fields sorted by name (case-sensitive; a repeated
 * name by value).
 */
export function twilioSignature(authToken: string, url: string, params: FormParams): string {
  const sorted = [...params].sort(([ak, av], [bk, bv]) =>
    ak === bk ? compare(av, bv) : compare(ak, bk),
  );
  const data = sorted.reduce((acc, [k, v]) => acc + k + v, url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The URLs a request may have been signed for: `webhookUrl` when the entry sets it (the public
 * URL Twilio calls), else the URL rebuilt from the request (its scheme and host honour
 * `X-Forwarded-Proto`/`-Host` only when TRUST_PROXY trusts the proxy, as Express does).
 * Each also with the default port added or removed, since Twilio signs some HTTPS URLs with
 * `:443` and some without (its helper libraries accept both).
 */
export function signedUrls(req: Request, webhookUrl: string | null): string[] {
  const url = webhookUrl ?? `${req.protocol}://${req.host}${req.originalUrl}`;
  const match = /^(https?):\/\/([^/?#:]+)(:\d+)?(.*)$/i.exec(url);
  if (match === null) return [url];
  const [, scheme, host, port, rest] = match;
  const defaultPort = scheme!.toLowerCase() === 'https' ? ':443' : ':80';
  if (port === undefined) return [url, `${scheme}://${host}${defaultPort}${rest}`];
  if (port === defaultPort) return [url, `${scheme}://${host}${rest}`];
  return [url];
}

/**
 * Checks `X-Twilio-Signature` over the raw body, before anything of it is used, and returns
 * the body's fields. A missing or wrong signature is a 401 failure body (compared in constant
 * time), so an unsigned request never reaches the dialogue.
 */
export function verifiedForm(
  channel: string,
  authToken: string,
  webhookUrl: string | null,
  req: Request,
): FormParams {
  const given = req.headers['x-twilio-signature'];
  const params = formParams(rawBody(req));
  let valid = false;
  if (typeof given === 'string' && given !== '') {
    for (const url of signedUrls(req, webhookUrl)) {
      // Every candidate is compared, so the time taken does not say which one matched.
      if (safeEqual(given, twilioSignature(authToken, url, params))) valid = true;
    }
  }
  if (!valid) {
    throw badSignature(
      channel,
      'The request is not signed with the auth token for this URL (X-Twilio-Signature)',
    );
  }
  return params;
}
