import { ran, startActionServer, type TestActionServer } from 'test/utils/action-server';

/** How `action_remind` sets its reminder for one conversation. */
export interface ReminderPlan {
  /** Milliseconds from the call to the reminder's `date_time`. */
  readonly inMs: number;
  readonly killOnUserMessage: boolean;
}

/**
 * The compatbot's custom actions (test/fixtures/compatbot) on a test action server:
 * `action_remind` answers "I will ping you." and schedules `EXTERNAL_ping` as rasa-sdk's
 * `ReminderScheduled` does (name `ping`), at the time and with the kill flag `plans` gives for
 * the conversation (300 ms, not killed, by default).
 */
export function startReminderActionServer(
  plans: Map<string, ReminderPlan> = new Map(),
): Promise<TestActionServer> {
  return startActionServer({
    action_remind: (call) => {
      const plan = plans.get(call.sender_id) ?? { inMs: 300, killOnUserMessage: false };
      return ran(
        [
          {
            event: 'reminder',
            timestamp: null,
            intent: 'EXTERNAL_ping',
            entities: null,
            date_time: new Date(Date.now() + plan.inMs).toISOString(),
            name: 'ping',
            kill_on_user_msg: plan.killOnUserMessage,
          },
        ],
        [
          {
            text: 'I will ping you.',
            buttons: [],
            elements: [],
            custom: {},
            template: null,
            response: null,
            image: null,
            attachment: null,
          },
        ],
      );
    },
  });
}
