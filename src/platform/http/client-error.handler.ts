import { maxHeaderSize, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { failureBody } from 'src/platform/errors/failure-body';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  431: 'Request Header Fields Too Large',
};

/**
 * Answers requests Node's HTTP parser refuses before any route sees them — a request line or
 * headers beyond Node's `maxHeaderSize` (431), malformed HTTP (400) — with the failure body
 * every other error gets, instead of Node's bare status line. The connection is closed
 * afterwards: the parser cannot tell where a next request would start.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const limit = maxHeaderSize;
    const body =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? failureBody(
            'HTTP.HEADERS_TOO_LARGE',
            `The request line and headers are larger than the server accepts (${limit} bytes).`,
            { rule: 'max_header_size', max_bytes: limit },
          )
        : failureBody('HTTP.MALFORMED_BODY', 'The request is not valid HTTP.');
    const json = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${body.code} ${STATUS_TEXT[body.code] ?? 'Bad Request'}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(json)}\r\n` +
        'Connection: close\r\n\r\n' +
        json,
    );
  });
}
