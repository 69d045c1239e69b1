import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  type BareItem,
  type InnerList,
  type Member,
  parseDictionary,
  serializeInnerList,
  StructuredFieldError,
} from 'src/core/voice/structured-fields';

/**
 * Verifier for HTTP message signatures (draft-ietf-httpbis-message-signatures-11, the scheme
 * Genesys AudioHook uses): HMAC-SHA256 over the signature base built from the components listed
 * in `Signature-Input`, in that order, with the re-serialized inner list as `@signature-params`.
 */
export type SignatureResultCode =
  'VERIFIED' | 'FAILED' | 'UNSIGNED' | 'EXPIRED' | 'INVALID' | 'PRECONDITION' | 'UNSUPPORTED';

export interface SignatureResult {
  readonly code: SignatureResultCode;
  /** Why verification did not succeed; never contains secrets. */
  readonly reason: string;
  /** Signature parameters of the verified signature (for the nonce replay check). */
  readonly params?: SignatureParams;
}

export interface SignatureParams {
  readonly keyid?: string;
  readonly nonce?: string;
  readonly alg?: string;
  readonly created?: number;
  readonly expires?: number;
}

/** The request as it arrived: header names lower-case. */
export interface SignedRequest {
  readonly method: string;
  /** Path and query exactly as requested (`@request-target`). */
  readonly target: string;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** `@authority`; defaults to the Host header. */
  readonly authority?: string;
  readonly scheme?: string;
}

export interface VerifyOptions {
  /** Key bytes for a keyid, or null when the keyid is unknown (a dummy key is used instead). */
  readonly keyFor: (keyid: string | undefined, params: SignatureParams) => Buffer | null;
  /** Current time in Unix seconds. */
  readonly now: number;
  /** Maximum age of `created` in seconds (requires `created`). */
  readonly maxSignatureAge?: number;
  /** Components that must be covered. */
  readonly requiredComponents?: readonly string[];
  /** Extra parameter checks run before the HMAC; return a reason to refuse (PRECONDITION). */
  readonly precondition?: (params: SignatureParams) => string | null;
}

export const MAX_CLOCK_SKEW_SECONDS = 3;
const KNOWN_PARAMS = new Set(['alg', 'created', 'expires', 'keyid', 'nonce']);
const DERIVED = new Set([
  '@method',
  '@authority',
  '@scheme',
  '@target-uri',
  '@request-target',
  '@path',
  '@query',
]);
const DUMMY_KEY = Buffer.alloc(32);

function result(
  code: SignatureResultCode,
  reason: string,
  params?: SignatureParams,
): SignatureResult {
  return params ? { code, reason, params } : { code, reason };
}

function headerValue(request: SignedRequest, name: string): string | undefined {
  const raw = request.headers[name];
  if (raw === undefined) return undefined;
  const values = typeof raw === 'string' ? [raw] : raw;
  return values.map((v) => v.replace(/[ \t]*\r\n[ \t]+/g, ' ').trim()).join(', ');
}

function derivedValue(request: SignedRequest, name: string): string | undefined {
  const target = request.target;
  const q = target.indexOf('?');
  const scheme = request.scheme ?? 'http';
  const authority = (request.authority ?? headerValue(request, 'host'))?.toLowerCase();
  switch (name) {
    case '@method':
      return request.method.toUpperCase();
    case '@authority':
      return authority;
    case '@scheme':
      return scheme.toLowerCase();
    case '@target-uri':
      return authority === undefined ? undefined : `${scheme}://${authority}${target}`;
    case '@request-target':
      return target;
    case '@path':
      return q < 0 ? target : target.slice(0, q);
    case '@query':
      return q < 0 ? '?' : target.slice(q);
    default:
      return undefined;
  }
}

function readParams(list: InnerList): SignatureParams | string {
  const params: Record<string, string | number> = {};
  for (const [key, value] of list.params) {
    if (!KNOWN_PARAMS.has(key)) return `unknown signature parameter "${key}"`;
    if (key === 'created' || key === 'expires') {
      if (value.kind !== 'integer' || value.value < 0) {
        return `${key} must be a non-negative integer`;
      }
      params[key] = value.value;
    } else {
      if (value.kind !== 'string') return `${key} must be a string`;
      params[key] = value.value;
    }
  }
  return params;
}

/** Verifies the first signature of the request. */
export function verifyHttpSignature(
  request: SignedRequest,
  options: VerifyOptions,
): SignatureResult {
  const sigHeader = headerValue(request, 'signature');
  const inputHeader = headerValue(request, 'signature-input');
  if (sigHeader === undefined && inputHeader === undefined) {
    return result('UNSIGNED', 'request is not signed');
  }
  if (sigHeader === undefined || inputHeader === undefined) {
    return result('INVALID', 'Signature and Signature-Input must both be present');
  }
  let signatures: Map<string, Member>;
  let inputs: Map<string, Member>;
  try {
    signatures = parseDictionary(sigHeader);
    inputs = parseDictionary(inputHeader);
  } catch (error) {
    const message = error instanceof StructuredFieldError ? error.message : 'parse error';
    return result('INVALID', `malformed signature header: ${message}`);
  }
  const label = [...inputs.keys()][0];
  if (label === undefined) return result('INVALID', 'Signature-Input is empty');
  const input = inputs.get(label);
  const signature = signatures.get(label);
  if (signature === undefined) return result('INVALID', `no signature for label "${label}"`);
  if (input?.type !== 'inner-list') {
    return result('INVALID', 'Signature-Input is not an inner list');
  }
  if (signature.type !== 'item' || signature.value.kind !== 'bytes') {
    return result('INVALID', 'Signature is not a byte sequence');
  }
  const params = readParams(input);
  if (typeof params === 'string') return result('INVALID', params);

  // Time window.
  const now = options.now;
  if (params.created !== undefined && params.created > now + MAX_CLOCK_SKEW_SECONDS) {
    return result('PRECONDITION', 'signature created in the future', params);
  }
  if (params.expires !== undefined && params.expires < now + MAX_CLOCK_SKEW_SECONDS) {
    return result('EXPIRED', 'signature expired', params);
  }
  if (options.maxSignatureAge !== undefined) {
    if (params.created === undefined) {
      return result('INVALID', 'signature has no created parameter', params);
    }
    if (params.created + options.maxSignatureAge < now + MAX_CLOCK_SKEW_SECONDS) {
      return result('EXPIRED', 'signature too old', params);
    }
  }

  // Components → signature base.
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const item of input.items) {
    const value: BareItem = item.value;
    if (value.kind !== 'string') {
      return result('INVALID', 'component identifiers must be strings', params);
    }
    const name = value.value;
    if (item.params.length > 0) {
      return result('UNSUPPORTED', `component parameters are not supported (${name})`, params);
    }
    if (name !== name.toLowerCase()) {
      return result('INVALID', `component "${name}" is not lower-case`, params);
    }
    if (seen.has(name)) return result('INVALID', `component "${name}" listed twice`, params);
    seen.add(name);
    let componentValue: string | undefined;
    if (name.startsWith('@')) {
      if (name === '@signature-params') {
        return result('INVALID', '@signature-params cannot be covered', params);
      }
      if (!DERIVED.has(name)) {
        return result('UNSUPPORTED', `component "${name}" is not supported`, params);
      }
      componentValue = derivedValue(request, name);
    } else {
      if (name === 'signature') {
        return result('UNSUPPORTED', 'the signature header cannot be covered', params);
      }
      componentValue = headerValue(request, name);
    }
    if (componentValue === undefined) {
      return result('PRECONDITION', `covered component "${name}" is missing`, params);
    }
    lines.push(`"${name}": ${componentValue}`);
  }
  for (const required of options.requiredComponents ?? []) {
    if (!seen.has(required)) {
      return result('PRECONDITION', `required component "${required}" is not covered`, params);
    }
  }
  const preconditionFailure = options.precondition?.(params) ?? null;
  if (preconditionFailure !== null) return result('PRECONDITION', preconditionFailure, params);
  lines.push(`"@signature-params": ${serializeInnerList(input)}`);

  const key = options.keyFor(params.keyid, params);
  const expected = createHmac('sha256', key ?? DUMMY_KEY)
    .update(lines.join('\n'), 'utf8')
    .digest();
  const actual = signature.value.value;
  const same =
    actual.length === expected.length
      ? timingSafeEqual(actual, expected)
      : timingSafeEqual(expected, expected) && false;
  if (params.alg !== undefined && params.alg !== 'hmac-sha256') {
    return result('UNSUPPORTED', `algorithm "${params.alg}" is not supported`, params);
  }
  if (key === null) return result('FAILED', 'unknown key id', params);
  if (!same) return result('FAILED', 'signature mismatch', params);
  return result('VERIFIED', 'verified', params);
}
