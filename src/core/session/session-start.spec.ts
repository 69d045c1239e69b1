import { Domain } from 'src/core/domain/domain';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { deserializeEvent, serializeEvent } from 'src/core/events/event-codec';
import { slotSet } from 'src/core/events/slot-set';
import {
  hasSessionExpired,
  needsSessionStart,
  sessionStartEvents,
  startSession,
} from 'src/core/session/session-start';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

const NOW = 1700000000.12;
const domain = Domain.fromYaml('slots:\n  name:\n    type: text\n    mappings: []\n');
const ev = (raw: Record<string, unknown>): DialogueEvent => deserializeEvent(raw, () => NOW);

describe('sessionStartEvents', () => {
  it('gives action_session_start, session_started, carried slots, action_listen with rising timestamps', () => {
    const events = sessionStartEvents({
      now: NOW,
      carriedSlots: [slotSet({ name: 'name', value: 'Sara', timestamp: 5, metadata: { old: 1 } })],
      metadata: { model_id: 'm', assistant_id: 'a' },
    }).map(serializeEvent);
    expect(events).toEqual([
      {
        event: 'action',
        timestamp: NOW,
        metadata: { model_id: 'm', assistant_id: 'a' },
        name: 'action_session_start',
        policy: null,
        confidence: 1.0,
        action_text: null,
        hide_rule_turn: false,
      },
      {
        event: 'session_started',
        timestamp: expect.any(Number),
        metadata: { model_id: 'm', assistant_id: 'a' },
      },
      {
        event: 'slot',
        timestamp: expect.any(Number),
        metadata: { old: 1, model_id: 'm', assistant_id: 'a' },
        name: 'name',
        value: 'Sara',
      },
      {
        event: 'action',
        timestamp: expect.any(Number),
        metadata: { model_id: 'm', assistant_id: 'a' },
        name: 'action_listen',
        policy: null,
        confidence: null,
        action_text: null,
        hide_rule_turn: false,
      },
    ]);
    const times = events.map((e) => e.timestamp as number);
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThan(times[i - 1] as number);
  });

  it('sets and carries session_started_metadata when channel metadata is given', () => {
    const events = sessionStartEvents({
      now: NOW,
      carriedSlots: [],
      sessionStartMetadata: { channel: 'x' },
    });
    expect(
      events.map((e) =>
        e.type === 'slot' ? `slot:${e.name}` : e.type === 'action' ? e.name : e.type,
      ),
    ).toEqual([
      'slot:session_started_metadata',
      'action_session_start',
      'session_started',
      'slot:session_started_metadata',
      'action_listen',
    ]);
  });
});

describe('startSession', () => {
  it('carries the applied slot events over when the domain says so', () => {
    const tracker = DialogueStateTracker.fromEvents(
      'c',
      [ev({ event: 'slot', name: 'name', value: 'Ann', timestamp: 1 })],
      domain,
    );
    const events = startSession(tracker, domain, NOW);
    for (const e of events) tracker.update(e);
    expect(tracker.getSlot('name')).toBe('Ann');
    expect(tracker.appliedEvents().map((e) => e.type)).toEqual(['slot', 'action']);

    const noCarry = Domain.fromYaml(
      'slots:\n  name:\n    type: text\n    mappings: []\nsession_config:\n  carry_over_slots_to_new_session: false\n',
    );
    expect(startSession(tracker, noCarry, NOW).map((e) => e.type)).toEqual([
      'action',
      'session_started',
      'action',
    ]);
  });
});

describe('needsSessionStart', () => {
  it('is true without applied events and after expiry, not before', () => {
    const tracker = new DialogueStateTracker('c', domain.slots);
    expect(needsSessionStart(tracker, domain, NOW)).toBe(true);
    for (const e of startSession(tracker, domain, NOW)) tracker.update(e);
    expect(needsSessionStart(tracker, domain, NOW)).toBe(false);
    tracker.update(ev({ event: 'user', text: 'hi', parse_data: {}, timestamp: NOW }));
    expect(hasSessionExpired(tracker, domain, NOW + 60 * 60)).toBe(false);
    expect(hasSessionExpired(tracker, domain, NOW + 60 * 60 + 1)).toBe(true);
    expect(needsSessionStart(tracker, domain, NOW + 60 * 60 + 1)).toBe(true);
    const disabled = Domain.fromYaml('session_config:\n  session_expiration_time: 0\n');
    expect(hasSessionExpired(tracker, disabled, NOW + 1e6)).toBe(false);
  });
});
