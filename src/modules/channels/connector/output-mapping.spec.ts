import { type BotMessage } from 'src/core';
import { FacebookOutputChannel } from 'src/modules/channels/facebook/facebook.output-channel';
import { SlackOutputChannel } from 'src/modules/channels/slack/slack.output-channel';
import { TelegramOutputChannel } from 'src/modules/channels/telegram/telegram.output-channel';
import { type PlatformCall, type PlatformClient } from './platform-client';

/** A client that records the calls an output channel makes and answers each `ok`. */
function recorder(): { client: PlatformClient; calls: Array<[string, unknown]> } {
  const calls: Array<[string, unknown]> = [];
  const client = {
    call: (call: PlatformCall) => {
      calls.push([call.path, call.json]);
      return Promise.resolve({ ok: true, status: 200, body: { ok: true } });
    },
  } as unknown as PlatformClient;
  return { client, calls };
}

const ELEMENTS: BotMessage = {
  elements: [
    {
      title: 'Sunrise',
      subtitle: 'A bright one',
      image_url: 'https://x.example/s.jpg',
      buttons: [{ title: 'More', payload: '/more' }],
    },
  ],
};

describe('Slack output mapping (Rasa SlackBot)', () => {
  it('splits text on blank lines, posts attachments, custom JSON and the base fallbacks', async () => {
    const { client, calls } = recorder();
    const out = new SlackOutputChannel(client, 'C1', '17.5');
    await out.sendResponse('U1', { text: 'one\n\ntwo' });
    await out.sendResponse('U1', { attachment: { fallback: 'f', title: 'T' } });
    await out.sendResponse('U1', { custom: { text: 'hey', blocks: [{ type: 'divider' }] } });
    await out.sendResponse('U1', { custom: { channel: 'C2', text: 'elsewhere', as_user: false } });
    await out.sendResponse('U1', {
      text: 'pick',
      quick_replies: [{ title: 'a', payload: '/a' }],
    });
    await out.sendResponse('U1', ELEMENTS);
    const thread = { thread_ts: '17.5' };
    const buttons = (text: string, title: string, value: string) => ({
      channel: 'C1',
      as_user: true,
      text,
      blocks: [
        { type: 'section', text: { type: 'plain_text', text } },
        {
          type: 'actions',
          elements: [{ type: 'button', text: { type: 'plain_text', text: title }, value }],
        },
      ],
      ...thread,
    });
    expect(calls).toEqual([
      [
        '/chat.postMessage',
        { channel: 'C1', as_user: true, text: 'one', type: 'mrkdwn', ...thread },
      ],
      [
        '/chat.postMessage',
        { channel: 'C1', as_user: true, text: 'two', type: 'mrkdwn', ...thread },
      ],
      [
        '/chat.postMessage',
        { channel: 'C1', as_user: true, attachments: [{ fallback: 'f', title: 'T' }], ...thread },
      ],
      [
        '/chat.postMessage',
        { channel: 'C1', text: 'hey', blocks: [{ type: 'divider' }], as_user: true, ...thread },
      ],
      ['/chat.postMessage', { channel: 'C2', text: 'elsewhere', as_user: false, ...thread }],
      ['/chat.postMessage', buttons('pick', 'a', '/a')],
      ['/chat.postMessage', buttons('Sunrise : A bright one', 'More', '/more')],
    ]);
  });

  it('sends the text alone when there are more than 5 buttons, to the recipient without a channel', async () => {
    const { client, calls } = recorder();
    const out = new SlackOutputChannel(client, null, null);
    const buttons = Array.from({ length: 6 }, (_, i) => ({ title: `b${i}`, payload: `/b${i}` }));
    await out.sendResponse('D9', { text: 'too many', buttons });
    expect(calls).toEqual([
      ['/chat.postMessage', { channel: 'D9', as_user: true, text: 'too many', type: 'mrkdwn' }],
    ]);
  });
});

describe('Telegram output mapping (Rasa TelegramOutput)', () => {
  const BUTTONS = [
    { title: 'yes', payload: '/affirm' },
    { title: 'no', payload: '/deny' },
  ];

  it('lays out buttons by button_type: vertical and reply keyboards', async () => {
    const { client, calls } = recorder();
    const out = new TelegramOutputChannel(client);
    await out.sendResponse('42', { text: 'v?', buttons: BUTTONS, button_type: 'vertical' });
    await out.sendResponse('42', {
      text: 'r?',
      buttons: [...BUTTONS, [{ title: 'a' }, { title: 'b' }, { title: 'c' }, { title: 'd' }]],
      button_type: 'reply',
    });
    await out.sendResponse('42', { text: 'x?', buttons: BUTTONS, button_type: 'sideways' });
    expect(calls).toEqual([
      [
        '/sendMessage',
        {
          chat_id: '42',
          text: 'v?',
          reply_markup: {
            inline_keyboard: [
              [{ text: 'yes', callback_data: '/affirm' }],
              [{ text: 'no', callback_data: '/deny' }],
            ],
          },
        },
      ],
      [
        '/sendMessage',
        {
          chat_id: '42',
          text: 'r?',
          reply_markup: {
            keyboard: [
              [{ text: 'yes' }],
              [{ text: 'no' }],
              [{ text: 'a' }, { text: 'b' }, { text: 'c' }],
              [{ text: 'd' }],
            ],
            resize_keyboard: false,
            one_time_keyboard: true,
          },
        },
      ],
    ]);
  });

  it('picks the Bot API method of custom JSON by its keys; attachments and elements fall back to text', async () => {
    const { client, calls } = recorder();
    const out = new TelegramOutputChannel(client);
    await out.sendResponse('42', { custom: { photo: 'https://x.example/p.jpg', caption: 'c' } });
    await out.sendResponse('42', { custom: { chat_id: 7, latitude: 1.5, longitude: 2.5 } });
    await out.sendResponse('42', { attachment: 'https://x.example/doc.pdf' });
    await out.sendResponse('42', ELEMENTS);
    expect(calls).toEqual([
      ['/sendPhoto', { chat_id: '42', photo: 'https://x.example/p.jpg', caption: 'c' }],
      ['/sendLocation', { chat_id: 7, latitude: 1.5, longitude: 2.5 }],
      ['/sendMessage', { chat_id: '42', text: 'Attachment: https://x.example/doc.pdf' }],
      [
        '/sendMessage',
        {
          chat_id: '42',
          text: 'Sunrise : A bright one',
          reply_markup: { inline_keyboard: [[{ text: 'More', callback_data: '/more' }]] },
        },
      ],
    ]);
  });
});

describe('Facebook output mapping (Rasa MessengerBot)', () => {
  const send = (id: string, message: unknown) => [
    '/me/messages',
    { messaging_type: 'RESPONSE', recipient: { id }, message, notification_type: 'REGULAR' },
  ];

  it('sends quick replies, a generic template, custom JSON and the attachment fallback', async () => {
    const { client, calls } = recorder();
    const out = new FacebookOutputChannel(client, 'token');
    await out.sendResponse('P1', {
      text: 'pick',
      quick_replies: [
        { title: 'a', payload: '/a' },
        { title: 'me', payload: '/me', content_type: 'user_email' },
      ],
    });
    await out.sendResponse('P1', ELEMENTS);
    await out.sendResponse('P1', { custom: { sender: { id: 'P2' }, text: 'raw' } });
    await out.sendResponse('P1', { attachment: { type: 'file' } });
    expect(calls).toEqual([
      send('P1', {
        text: 'pick',
        quick_replies: [
          { content_type: 'text', title: 'a', payload: '/a' },
          { content_type: 'user_email', title: 'me', payload: '/me' },
        ],
      }),
      send('P1', {
        attachment: {
          type: 'template',
          payload: {
            template_type: 'generic',
            elements: [
              {
                title: 'Sunrise',
                subtitle: 'A bright one',
                image_url: 'https://x.example/s.jpg',
                buttons: [{ title: 'More', payload: '/more', type: 'postback' }],
              },
            ],
          },
        },
      }),
      send('P2', { text: 'raw' }),
      send('P1', { text: "Attachment: {'type': 'file'}" }),
    ]);
  });

  it('keeps a button type it is given and sends the text alone above 3 buttons', async () => {
    const { client, calls } = recorder();
    const out = new FacebookOutputChannel(client, 'token');
    await out.sendResponse('P1', {
      text: 'go',
      buttons: [{ type: 'web_url', title: 'site', url: 'https://x.example' }],
    });
    const four = Array.from({ length: 4 }, (_, i) => ({ title: `b${i}`, payload: `/b${i}` }));
    await out.sendResponse('P1', { text: 'many', buttons: four });
    expect(calls).toEqual([
      send('P1', {
        attachment: {
          type: 'template',
          payload: {
            template_type: 'button',
            text: 'go',
            buttons: [{ type: 'web_url', title: 'site', url: 'https://x.example' }],
          },
        },
      }),
      send('P1', { text: 'many' }),
    ]);
  });
});
