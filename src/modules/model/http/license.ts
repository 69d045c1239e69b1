import { decode } from 'jsonwebtoken';

/** License record of `GET /license`. */
export interface LicenseRecord {
  id: string | null;
  company: string | null;
  scope: string | null;
  email: string | null;
  /** ISO 8601 with offset, e.g. `2026-01-01T00:00:00+00:00`. */
  expires: string | null;
}

export const OPEN_SOURCE_LICENSE: LicenseRecord = {
  id: null,
  company: null,
  scope: null,
  email: null,
  expires: null,
};

function text(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(' ');
  return null;
}

/** Seconds since the epoch → `YYYY-MM-DDTHH:MM:SS+00:00` (Python's isoformat in UTC). */
function isoWithOffset(seconds: unknown): string | null {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return null;
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) return null;
  return date.toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

/**
 * The record for a license JWT: its payload decoded (jti → id, company, scope, email,
 * exp → expires). The signature is NOT verified — that needs the vendor's public key, which an
 * open-source server does not have — so the record is informational only. Without a license
 * (or with an undecodable one) every field is null.
 */
export function licenseRecord(token: string | null): LicenseRecord {
  if (token === null) return { ...OPEN_SOURCE_LICENSE };
  const payload = decode(token, { json: true });
  if (payload === null) return { ...OPEN_SOURCE_LICENSE };
  return {
    id: text(payload.jti),
    company: text(payload.company),
    scope: text(payload.scope),
    email: text(payload.email),
    expires: isoWithOffset(payload.exp),
  };
}
