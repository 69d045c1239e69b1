import { actionExecuted } from 'src/core/events/action-executed';
import { encodeEvent } from 'src/core/events/encoded-event';
import { userUttered } from 'src/core/events/user-uttered';

describe('encodeEvent', () => {
  it('files intents, actions and the assistant under their columns', () => {
    const user = encodeEvent(
      userUttered({
        text: 'hi',
        intent: { name: 'greet' },
        metadata: { assistant_id: 'bot' },
        timestamp: 1,
      }),
    );
    expect([user.type, user.intent, user.action, user.assistantId]).toEqual([
      'user',
      'greet',
      null,
      'bot',
    ]);
    const action = encodeEvent(actionExecuted({ name: 'utter_greet', timestamp: 2 }));
    expect([action.type, action.intent, action.action, action.assistantId]).toEqual([
      'action',
      null,
      'utter_greet',
      null,
    ]);
    expect(JSON.parse(action.json)).toEqual({
      event: 'action',
      timestamp: 2,
      name: 'utter_greet',
      policy: null,
      confidence: null,
      action_text: null,
      hide_rule_turn: false,
    });
  });
});
