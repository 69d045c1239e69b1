/** What an OpenAI-compatible call needs: where, with which key, how long at most. */
export interface OpenAiEndpoint {
  readonly apiBase: string;
  readonly apiKey: string | null;
  readonly timeoutMs: number;
}

/**
 * POSTs `body` as JSON to `<apiBase>/<path>` of an OpenAI-compatible API (the key as a bearer
 * token) and answers the parsed JSON. A non-2xx answer, a network failure or the timeout throw
 * `fail(message)`: the chat-completions and embeddings callers each name their own error.
 */
export async function postOpenAi(
  fetchImpl: typeof fetch,
  endpoint: OpenAiEndpoint,
  path: string,
  body: unknown,
  fail: (message: string) => Error,
  what: string,
): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
  let response: Response;
  try {
    response = await fetchImpl(`${endpoint.apiBase.replace(/\/+$/, '')}/${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(endpoint.timeoutMs),
    });
  } catch (e) {
    throw fail(`The ${what} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!response.ok) throw fail(`The ${what} answered ${response.status}.`);
  try {
    return await response.json();
  } catch (e) {
    throw fail(`The ${what} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
