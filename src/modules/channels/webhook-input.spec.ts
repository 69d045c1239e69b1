import { DialogueError } from 'src/core';
import { parseWebhookBody } from './webhook-input';

function errorOf(body: unknown): DialogueError {
  try {
    parseWebhookBody(body, 'callback');
  } catch (e) {
    return e as DialogueError;
  }
  throw new Error('expected a DialogueError');
}

describe('parseWebhookBody', () => {
  it('reads sender, message (stripped), metadata and input_channel', () => {
    expect(
      parseWebhookBody(
        { sender: 'u1', message: '  hi  ', metadata: { a: 1 }, input_channel: 'web', stream: true },
        'callback',
      ),
    ).toEqual({
      sender: 'u1',
      message: 'hi',
      metadata: { a: 1 },
      inputChannel: 'web',
      stream: true,
    });
  });

  it('turns a numeric sender into a string, as Rasa does', () => {
    expect(parseWebhookBody({ sender: 42, message: 'hi' }, 'callback').sender).toBe('42');
  });

  it.each([
    [undefined, 'REQUEST.BODY_MISSING', undefined],
    ['just text', 'REQUEST.INVALID_PARAMETER', 'body'],
    [[1, 2], 'REQUEST.INVALID_PARAMETER', 'body'],
    [{ message: 'hi' }, 'REQUEST.INVALID_PARAMETER', 'sender'],
    [{ sender: '', message: 'hi' }, 'REQUEST.INVALID_PARAMETER', 'sender'],
    [{ sender: { id: 1 }, message: 'hi' }, 'REQUEST.INVALID_PARAMETER', 'sender'],
    [{ sender: 'u1' }, 'REQUEST.INVALID_PARAMETER', 'message'],
    [{ sender: 'u1', message: 5 }, 'REQUEST.INVALID_PARAMETER', 'message'],
    [{ sender: 'u1', message: 'hi', metadata: 'x' }, 'REQUEST.INVALID_PARAMETER', 'metadata'],
    [{ sender: 'u1', message: 'hi', metadata: [1] }, 'REQUEST.INVALID_PARAMETER', 'metadata'],
    [
      { sender: 'u1', message: 'hi', input_channel: 3 },
      'REQUEST.INVALID_PARAMETER',
      'input_channel',
    ],
    [{ sender: 'u1', message: 'hi', stream: 'yes' }, 'REQUEST.INVALID_PARAMETER', 'stream'],
  ])('rejects %j with %s naming %s', (body, code, field) => {
    const error = errorOf(body);
    expect(error).toBeInstanceOf(DialogueError);
    expect(error.code).toBe(code);
    expect(error.details.parameter).toBe(field);
    if (field !== undefined && field !== 'body') expect(error.message).toContain(`"${field}"`);
  });
});
