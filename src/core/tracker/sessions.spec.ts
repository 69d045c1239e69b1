import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { deserializeEvent } from 'src/core/events/event-codec';
import { parseEventVerbosity } from 'src/core/tracker/event-verbosity';
import { splitSessions } from 'src/core/tracker/sessions';

const ev = (raw: Record<string, unknown>): DialogueEvent =>
  deserializeEvent({ timestamp: 1, ...raw }, () => 1);
const start = (): DialogueEvent => ev({ event: 'action', name: 'action_session_start' });

describe('splitSessions', () => {
  it('starts a new session at each action_session_start', () => {
    const a = [
      start(),
      ev({ event: 'session_started' }),
      ev({ event: 'action', name: 'action_listen' }),
    ];
    const b = [start(), ev({ event: 'session_started' })];
    expect(splitSessions([...a, ...b])).toEqual([a, b]);
  });

  it('keeps events before the first session start as a session and gives none for no events', () => {
    const pre = [ev({ event: 'pause' })];
    expect(splitSessions([...pre, start()])).toEqual([
      pre,
      [expect.objectContaining({ name: 'action_session_start' })],
    ]);
    expect(splitSessions([])).toEqual([]);
  });
});

describe('parseEventVerbosity', () => {
  it.each([
    [undefined, 'AFTER_RESTART'],
    ['all', 'ALL'],
    ['Applied', 'APPLIED'],
    ['NONE', 'NONE'],
    ['after_restart', 'AFTER_RESTART'],
    ['', null],
    ['everything', null],
  ])('reads %p as %p', (value, expected) => {
    expect(parseEventVerbosity(value)).toBe(expected);
  });
});
