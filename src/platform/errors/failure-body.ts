import { REST_API_VERSION } from 'src/platform/config/version';
import { ERROR_MAP, type ErrorCode } from './error-map';

/** Rasa's failure body, key for key. */
export interface FailureBody {
  version: string;
  status: 'failure';
  message: string;
  reason: string;
  details: Record<string, unknown> | string;
  help: string | null;
  code: number;
}

export function failureBody(
  code: ErrorCode,
  message: string,
  details: Record<string, unknown> | string = {},
): FailureBody {
  const mapping = ERROR_MAP[code];
  return {
    version: REST_API_VERSION,
    status: 'failure',
    message,
    reason: mapping.reason,
    details,
    help: mapping.help,
    code: mapping.http,
  };
}
