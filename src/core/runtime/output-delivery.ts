import { botMessageOf } from 'src/core/actions/nlg';
import { type CommittedTurn, type RuntimeLog, TurnListener } from './turn-listener';

/** Sends a committed turn's bot messages to its output channel, in order. */
export class OutputDelivery extends TurnListener {
  constructor(private readonly log: RuntimeLog) {
    super();
  }

  async onTurnCommitted(turn: CommittedTurn): Promise<void> {
    const output = turn.output;
    if (!turn.effects || output === null) return;
    for (const e of turn.events) {
      if (e.type !== 'bot') continue;
      try {
        await output.sendResponse(turn.conversationId, botMessageOf(e));
      } catch (error) {
        this.log.warn('could not send a bot message', {
          sender: turn.conversationId,
          channel: output.name,
          error: (error as Error).message,
        });
      }
    }
  }
}
