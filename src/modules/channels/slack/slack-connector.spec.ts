import type { Request, Response } from 'express';
import { createHmac } from 'node:crypto';
import { type UserMessage } from 'src/core';
import { type ChannelInput } from 'src/modules/channels/input/channel-input';
import { slackSettings } from './slack-config';
import { sanitize, SlackConnector } from './slack-connector';

describe('sanitize (Rasa _sanitize_user_message)', () => {
  it("takes the bot's mentions out and turns Slack link markup into its label", () => {
    expect(sanitize('<@U0BOT> hi there', ['U0BOT'])).toBe('hi there');
    expect(sanitize('hi <@U0BOT>', ['U0BOT'])).toBe('hi');
    expect(sanitize('hi<@U0BOT>there', ['U0BOT'])).toBe('hi there');
    expect(sanitize('ask <@U0OTHER>', ['U0BOT'])).toBe('ask <@U0OTHER>');
    expect(sanitize('see <https://x.example/a|x.example/a> now', [])).toBe('see x.example/a now');
  });
});

/** One signed Events API request through the connector; returns the user message handed on. */
async function deliver(granularity: string, event: Record<string, unknown>) {
  const settings = slackSettings('credentials.yml', {
    slack_token: 'xoxb',
    slack_signing_secret: 'secret',
    conversation_granularity: granularity,
  });
  const handled: UserMessage[] = [];
  const input = {
    channel: 'slack',
    handleMessage: (m: UserMessage) => Promise.resolve(void handled.push(m)),
  } as unknown as ChannelInput;
  const body = Buffer.from(JSON.stringify({ type: 'event_callback', event }));
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = createHmac('sha256', 'secret').update(`v0:${ts}:`).update(body).digest('hex');
  const req = {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'x-slack-request-timestamp': ts,
      'x-slack-signature': `v0=${sig}`,
    },
  } as unknown as Request;
  const res = {
    status: () => res,
    type: () => res,
    send: () => res,
  } as unknown as Response;
  await new SlackConnector(settings, input).handle('webhook', req, res);
  return handled;
}

describe('SlackConnector conversation_granularity', () => {
  const event = {
    type: 'app_mention',
    channel: 'C1',
    user: 'U1',
    text: 'hi',
    ts: '2.0',
    thread_ts: '1.0',
  };

  it.each([
    ['sender', 'U1'],
    ['channel', 'U1_C1'],
    ['thread', 'U1_C1_1.0'],
  ])('%s: the sender is %s', async (granularity, sender) => {
    const [message] = await deliver(granularity, event);
    expect(message?.senderId).toBe(sender);
    expect(message?.metadata).toEqual({ out_channel: 'C1', thread_id: '1.0', users: [] });
  });
});
