import { type ErrorCode } from './error-map';

/** An error raised by the Nest layer itself (not by the core), mapped through ERROR_MAP. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> | string = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}
