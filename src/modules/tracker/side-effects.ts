/**
 * Port for `execute_side_effects` on append events (operation 5): the dialogue engine sends
 * the posted bot messages to the output channel and schedules posted reminders. Provided by
 * the dialogue module; without it the flag has no effect.
 */
export abstract class TrackerSideEffects {
  abstract execute(conversationId: string, body: unknown, outputChannel: unknown): Promise<void>;
}
