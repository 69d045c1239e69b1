/** endpoints.yml `tracing:` (Rasa Pro's keys), as Parley uses it. */
export interface TracingSettings {
  /** `type` as written: `otlp` or `jaeger` (exported as OTLP either way). */
  readonly type: 'otlp' | 'jaeger';
  /** The OTLP/HTTP traces URL spans are posted to. */
  readonly url: string;
  readonly serviceName: string;
  /** PEM file of the CAs that sign the collector's certificate (`root_certificates`). */
  readonly rootCertificates: string | null;
}

/** Rasa Pro's default `service_name`. */
export const DEFAULT_SERVICE_NAME = 'rasa';

/** The OTLP/HTTP port collectors (and Jaeger ≥ 1.35) listen on. */
const OTLP_HTTP_PORT = 4318;

/**
 * Reads endpoints.yml's `tracing:` entry: none → null (tracing off). `type: otlp` with
 * `endpoint` (`http(s)://host:4318/v1/traces`; a bare `host:port` gets `http://` when
 * `insecure: true`, else `https://`, and a URL without a path gets `/v1/traces`);
 * `type: jaeger` is exported as OTLP too (warned): to its `endpoint`, else to
 * `http://<host>:4318/v1/traces`. Problems are thrown as messages; notes go to `warnings`.
 */
export function tracingSettingsOf(
  file: string,
  entry: unknown,
  warnings: string[],
): TracingSettings | null {
  if (entry === undefined || entry === null) return null;
  if (typeof entry !== 'object' || Array.isArray(entry)) {
    throw new Error(`${file}: tracing must be a mapping (type, endpoint, …)`);
  }
  const e = entry as Record<string, unknown>;
  const type = e.type;
  if (type !== 'otlp' && type !== 'jaeger') {
    throw new Error(`${file}: tracing.type must be otlp or jaeger`);
  }
  const serviceName =
    typeof e.service_name === 'string' && e.service_name.trim() !== ''
      ? e.service_name.trim()
      : DEFAULT_SERVICE_NAME;
  const insecure = e.insecure === true || e.insecure === 'true';
  const rootCertificates =
    typeof e.root_certificates === 'string' && e.root_certificates !== ''
      ? e.root_certificates
      : null;
  let endpoint = typeof e.endpoint === 'string' && e.endpoint.trim() !== '' ? e.endpoint : null;
  if (type === 'jaeger') {
    if (endpoint === null && typeof e.host === 'string' && e.host !== '') {
      endpoint = `http://${e.host}:${OTLP_HTTP_PORT}`;
    }
    warnings.push(
      `${file}: tracing type jaeger: Parley exports OTLP over HTTP, to ${endpoint ?? '(no endpoint)'}; Jaeger accepts it on port ${OTLP_HTTP_PORT}`,
    );
  }
  if (endpoint === null) {
    throw new Error(`${file}: tracing needs an 'endpoint' (the OTLP/HTTP collector URL)`);
  }
  return { type, url: otlpUrl(file, endpoint, insecure), serviceName, rootCertificates };
}

function otlpUrl(file: string, endpoint: string, insecure: boolean): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint)
    ? endpoint
    : `${insecure ? 'http' : 'https'}://${endpoint}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`${file}: tracing.endpoint is not a URL: ${endpoint}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${file}: tracing.endpoint must be http(s) (Parley exports OTLP over HTTP)`);
  }
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces';
  return url.toString();
}
