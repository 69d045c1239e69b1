import {
  botMessageOf,
  botUtteranceFrom,
  fillTemplate,
  generateResponse,
} from 'src/core/actions/nlg';
import { Domain } from 'src/core/domain/domain';

const domain = Domain.fromObject({
  responses: {
    utter_hi: [
      { text: 'Hi {name}!', buttons: [{ title: '{name}', payload: '/x' }] },
      { text: 'VIP {name}', condition: [{ type: 'slot', name: 'vip', value: true }] },
      { text: 'Hi on slack', channel: 'slack' },
    ],
    utter_count: [{ text: '{n} seats, outdoor {outdoor}, missing {nope}' }],
  },
});

describe('response generation (NLG)', () => {
  it('fills {slot} placeholders like str.format, also in buttons', () => {
    expect(generateResponse(domain, 'utter_hi', { name: 'Ann', vip: false }, null)).toEqual({
      text: 'Hi Ann!',
      buttons: [{ title: 'Ann', payload: '/x' }],
    });
  });

  it('prefers conditional variations whose conditions hold', () => {
    expect(generateResponse(domain, 'utter_hi', { name: 'Ann', vip: true }, null)?.text).toBe(
      'VIP Ann',
    );
  });

  it('uses channel-specific variations for their channel only', () => {
    expect(generateResponse(domain, 'utter_hi', { name: 'A', vip: true }, 'slack')?.text).toBe(
      'Hi on slack',
    );
  });

  it('leaves a template with a missing key unchanged and prints Python values', () => {
    expect(fillTemplate('{n} seats, outdoor {outdoor}', { n: 3, outdoor: true })).toBe(
      '3 seats, outdoor True',
    );
    expect(generateResponse(domain, 'utter_count', { n: 2 }, null)?.text).toBe(
      '{n} seats, outdoor {outdoor}, missing {nope}',
    );
    expect(fillTemplate('{x}', { x: null })).toBe('None');
  });

  it('returns null for an unknown response', () => {
    expect(generateResponse(domain, 'utter_nope', {}, null)).toBeNull();
  });

  it('bot events carry text, data and the rest as metadata; the message shows the image once', () => {
    const e = botUtteranceFrom({ text: 't', image: 'i.png', utter_action: 'utter_x' }, 5);
    expect(e).toMatchObject({
      text: 't',
      data: { image: 'i.png', attachment: 'i.png', buttons: null },
      metadata: { utter_action: 'utter_x' },
    });
    expect(botMessageOf(e)).toMatchObject({ text: 't', image: 'i.png', attachment: null });
  });

  it('a bot message is the data, then text and timestamp, then the metadata (Rasa key order)', () => {
    const e = botUtteranceFrom(
      { text: 'Hey', buttons: [{ title: 'ok', payload: '/ok' }], utter_action: 'utter_greet' },
      7.5,
    );
    const stamped = { ...e, metadata: { ...e.metadata, model_id: 'm1' } };
    const message = botMessageOf(stamped);
    expect(Object.entries(message)).toEqual([
      ['elements', null],
      ['quick_replies', null],
      ['buttons', [{ title: 'ok', payload: '/ok' }]],
      ['attachment', null],
      ['image', null],
      ['custom', null],
      ['text', 'Hey'],
      ['timestamp', 7.5],
      ['utter_action', 'utter_greet'],
      ['model_id', 'm1'],
    ]);
    expect(stamped.data).not.toHaveProperty('text'); // the event is not changed
  });
});
