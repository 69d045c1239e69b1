import { maxHeaderSize, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { failureBody } from 'src/platform/errors/failure-body';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  431: 'Request Header Fields Too Large',
};

/** How long a connection whose request was refused stays open for the client to read the answer. */
const LINGER_MS = 5_000;

/**
 * Answers requests Node's HTTP parser refuses before any route sees them — a request line or
 * headers beyond Node's `maxHeaderSize` (431), malformed HTTP (400) — with the failure body
 * every other error gets, instead of Node's bare status line.
 *
 * The connection cannot carry another request (the parser cannot tell where one would start),
 * so the answer says `Connection: close` and the socket is half-closed, not destroyed: a client
 * may still be sending a large body, and closing a socket with unread bytes makes the kernel
 * reset the connection, which throws away the answer before the client reads it. Reading stops
 * (the client's writes stall once the buffers fill), and after {@link LINGER_MS} the connection
 * is cut. The parser reports its error again for every later chunk; the first answer stands.
 */
export function answerClientErrors(server: Server): void {
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    if (answered.has(socket)) return;
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    answered.add(socket);
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
    socket.pause();
    socket.end(
      `HTTP/1.1 ${body.code} ${STATUS_TEXT[body.code] ?? 'Bad Request'}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(json)}\r\n` +
        'Connection: close\r\n\r\n' +
        json,
    );
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
