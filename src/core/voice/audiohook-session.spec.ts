import { type JsonObject } from 'src/core/events/event-base';
import { AudioHookSession, type AudioHookListener } from 'src/core/voice/audiohook-session';

const SESSION = '30b0e395-84d3-4570-ac13-9a62d8f514c0';
const ORG = 'd7934305-0972-4844-938e-9060eef73d05';

/** A session over a recording transport, driven like a Genesys client would. */
function harness() {
  const sent: JsonObject[] = [];
  const audio: Uint8Array[] = [];
  const heard: string[] = [];
  const listener: AudioHookListener = {
    onOpen: () => heard.push('open'),
    onAudio: (a) => audio.push(a),
    onDtmf: () => undefined,
    onPlaybackStarted: () => undefined,
    onPlaybackCompleted: () => undefined,
    onPaused: () => heard.push('paused'),
    onResumed: () => heard.push('resumed'),
    onUpdate: () => undefined,
    onClientError: () => undefined,
    onClose: () => heard.push('close'),
    onEnd: () => heard.push('end'),
  };
  const session = new AudioHookSession(
    { sessionId: SESSION, organizationId: ORG },
    {
      sendText: (text) => sent.push(JSON.parse(text) as JsonObject),
      sendBinary: () => undefined,
      close: () => undefined,
    },
    listener,
    { warn: () => undefined, debug: () => undefined },
  );
  let seq = 0;
  const send = (type: string, parameters: JsonObject = {}): void =>
    session.handleText(
      JSON.stringify({
        version: '2',
        id: SESSION,
        type,
        seq: ++seq,
        serverseq: session.lastServerSeq,
        position: 'PT0S',
        parameters,
      }),
    );
  send('open', {
    organizationId: ORG,
    conversationId: '090eaa2f-72fa-480a-83e0-8667ff89c0ec',
    participant: { id: '883efee8-3d6c-4537-b500-6d7ca4b92fa0', ani: '', aniName: '', dnis: '' },
    media: [{ type: 'audio', format: 'PCMU', channels: ['external'], rate: 8000 }],
  });
  const types = (): string[] => sent.map((m) => String(m.type));
  return { session, send, sent, types, audio, heard };
}

describe('AudioHookSession pause and resume', () => {
  it('server → client: pause, answered by paused; resume, answered by resumed', () => {
    const h = harness();
    h.session.pause();
    expect(h.types()).toEqual(['opened', 'pause']);
    expect(h.sent[1]).toMatchObject({ seq: 2, clientseq: 1, parameters: {} });
    h.session.pause(); // already asked: not repeated
    expect(h.types()).toEqual(['opened', 'pause']);
    h.session.handleBinary(new Uint8Array(1600).fill(0xff)); // audio before `paused` still counts
    expect(h.audio).toHaveLength(1);
    h.send('paused');
    expect(h.session.state).toBe('paused');
    expect(h.heard).toContain('paused');
    h.session.handleBinary(new Uint8Array(1600).fill(0xff)); // dropped while paused
    expect(h.audio).toHaveLength(1);
    h.session.resume();
    expect(h.types()).toEqual(['opened', 'pause', 'resume']);
    h.send('resumed', { start: 'PT2S', discarded: 'PT1.6S' });
    expect(h.session.state).toBe('active');
    expect(h.heard).toContain('resumed');
    h.session.handleBinary(new Uint8Array(1600).fill(0xff));
    expect(h.audio).toHaveLength(2);
    // the session never answers paused/resumed itself
    expect(h.types()).toEqual(['opened', 'pause', 'resume']);
  });

  it('a resume asked before the client confirmed the pause is still sent', () => {
    const h = harness();
    h.session.pause();
    h.session.resume();
    expect(h.types()).toEqual(['opened', 'pause', 'resume']);
    h.session.resume();
    expect(h.types()).toEqual(['opened', 'pause', 'resume']);
  });

  it('resume without a pause sends nothing', () => {
    const h = harness();
    h.session.resume();
    expect(h.types()).toEqual(['opened']);
  });

  it('client → server: paused/resumed on its own (hold) need no answer', () => {
    const h = harness();
    h.send('paused');
    expect(h.session.state).toBe('paused');
    h.send('resumed', { start: 'PT3S', discarded: 'PT0S' });
    expect(h.session.state).toBe('active');
    expect(h.types()).toEqual(['opened']);
  });

  it.each(['pause', 'resume'])('client → server: %s is a protocol error', (type) => {
    const h = harness();
    h.send(type);
    expect(h.types()).toEqual(['opened', 'disconnect']);
    expect(h.sent[1]?.parameters).toMatchObject({
      reason: 'error',
      info: `Invalid message: '${type}' is not a supported client message`,
    });
  });
});
