import { TurnObserver, type TurnOutcome, type TurnStart } from 'src/core';
import { channelLabel, parleyMetrics } from './parley-metrics';

/** The runtime's TurnObserver on Prometheus: `parley_turns_total`, `parley_turn_duration_seconds`. */
export class PrometheusTurnObserver extends TurnObserver {
  private readonly turns = parleyMetrics.turns();
  private readonly duration = parleyMetrics.turnDuration();

  turnStarted(turn: TurnStart): (outcome: TurnOutcome) => void {
    const end = this.duration.startTimer();
    const channel = channelLabel(turn.channel);
    return (outcome) => {
      end();
      this.turns.inc({ channel, outcome });
    };
  }
}
