/**
 * What a failed `fetch` says, with the socket error behind it: fetch's own message ("fetch
 * failed") hides it. Duck-typed, since fetch's errors come from another realm than the test's.
 */
export function describeFetchError(error: unknown): string {
  const e = error as { message?: unknown; cause?: { code?: unknown; message?: unknown } } | null;
  const message = typeof e?.message === 'string' ? e.message : String(error);
  const detail = e?.cause?.code ?? e?.cause?.message;
  return typeof detail === 'string' && detail !== '' ? `${message} (${detail})` : message;
}
