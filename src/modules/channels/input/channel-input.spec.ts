import { CollectingOutputChannel, type UserMessage } from 'src/core';
import { ChannelInput, type InputLog } from './channel-input';

function message(overrides: Partial<UserMessage> = {}): UserMessage {
  return {
    text: 'hi',
    senderId: 'u1',
    inputChannel: 'test',
    output: new CollectingOutputChannel(),
    metadata: null,
    ...overrides,
  };
}

describe('ChannelInput', () => {
  const handled: UserMessage[] = [];
  const warnings: Array<[Record<string, unknown>, string]> = [];
  const log: InputLog = { warn: (context, text) => warnings.push([context, text]) };
  let failWith: Error | null = null;
  const handler = {
    handleMessage: (m: UserMessage): Promise<void> => {
      if (failWith !== null) return Promise.reject(failWith);
      handled.push(m);
      return Promise.resolve();
    },
  };
  const input = (logTo: InputLog | null = log) =>
    new ChannelInput(handler, { channel: 'test', log: logTo });

  beforeEach(() => {
    handled.length = 0;
    warnings.length = 0;
    failWith = null;
  });

  it('hands a message that follows the rules to the MessageHandler', async () => {
    const m = message();
    await input().handleMessage(m);
    expect(handled).toEqual([m]);
    expect(warnings).toEqual([]);
  });

  it('lets a message without text through (the handler reads parse data)', async () => {
    await input().handleMessage(message({ text: null }));
    expect(handled).toHaveLength(1);
  });

  it('logs a failed turn as not stored and rethrows it', async () => {
    failWith = new Error('database down');
    await expect(input().handleMessage(message())).rejects.toThrow('database down');
    expect(warnings).toEqual([
      [
        { channel: 'test', sender: 'u1', err: 'database down' },
        'the user message could not be handled; the turn was not stored',
      ],
    ]);
  });

  it('leaves the logging to the channel when it has no log', async () => {
    failWith = new Error('boom');
    await expect(input(null).handleMessage(message())).rejects.toThrow('boom');
    expect(warnings).toEqual([]);
  });
});
