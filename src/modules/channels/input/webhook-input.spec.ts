import { DialogueError } from 'src/core';
import { parseRestWebhookBody, parseWebhookBody } from './webhook-input';

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
      messageId: null,
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

describe('parseRestWebhookBody (the rest channel)', () => {
  function restError(body: unknown): DialogueError {
    try {
      parseRestWebhookBody(body, 10);
    } catch (e) {
      return e as DialogueError;
    }
    throw new Error('expected a DialogueError');
  }

  it('reads sender (numbers become strings), message (stripped), metadata and input_channel', () => {
    expect(
      parseRestWebhookBody({ sender: 7, message: ' hi ', metadata: { a: 1 }, stream: 'x' }, 10),
    ).toEqual({
      sender: '7',
      message: 'hi',
      metadata: { a: 1 },
      inputChannel: null,
      messageId: null,
    });
    expect(
      parseRestWebhookBody({ sender: 'u', message: 'hi', input_channel: 'web' }, 10).inputChannel,
    ).toBe('web');
  });

  it.each([
    [undefined, 'body', 'The request body must be a JSON object with "sender" and "message".'],
    [{ message: 'hi' }, 'sender', 'The request body needs a "sender" (the conversation id).'],
    [{ sender: true, message: 'hi' }, 'sender', '"sender" must be a string.'],
    [{ sender: 'u' }, 'message', 'The request body needs a "message" (text).'],
    [{ sender: 'u', message: 'hi', metadata: [] }, 'metadata', '"metadata" must be an object.'],
    [
      { sender: 'u', message: 'hi', input_channel: 1 },
      'input_channel',
      '"input_channel" must be a string.',
    ],
    [{ sender: 'u', message: 'x'.repeat(11) }, 'message', 'the limit is 10'],
  ])('rejects %j naming %s', (body, field, message) => {
    const error = restError(body);
    expect(error).toBeInstanceOf(DialogueError);
    expect(error.code).toBe('REQUEST.INVALID_PARAMETER');
    expect(error.details.parameter).toBe(field);
    expect(error.message).toContain(message);
  });
});
