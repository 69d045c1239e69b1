import { SingleBar } from 'cli-progress';
import { type ProgressCallback } from 'src/core/nlu';

/** How `parley train` shows training progress. */
export interface TrainProgress {
  readonly onProgress: ProgressCallback;
  /** Ends the display (call once training is over, also after a failure). */
  stop(): void;
}

/**
 * A progress bar (cli-progress) on a terminal; plain lines (`  <stage> <n>%`, every 10 % of a
 * stage) otherwise, so logs and pipes stay readable.
 */
export function trainProgress(
  stream: NodeJS.WriteStream,
  log: (line: string) => void,
): TrainProgress {
  if (stream.isTTY !== true) {
    let last = '';
    return {
      onProgress: (stage, fraction) => {
        const key = `${stage} ${Math.floor(fraction * 10) * 10}%`;
        if (key === last) return;
        last = key;
        log(`  ${key}`);
      },
      stop: () => undefined,
    };
  }
  const bar = new SingleBar({
    stream,
    format: 'training [{bar}] {percentage}% | {step} {stage} | {duration_formatted}',
    barCompleteChar: '\u2588',
    barIncompleteChar: '\u2591',
    hideCursor: true,
    clearOnComplete: false,
    etaBuffer: 20,
  });
  let started = false;
  let stopped = false;
  const stop = (): void => {
    if (started && !stopped) bar.stop();
    stopped = true;
  };
  return {
    onProgress: (stage, fraction, { index, total }) => {
      if (stopped) return;
      // Each pipeline step counts once; the current step's own fraction fills its share.
      const overall = Math.round((1000 * (index + fraction)) / Math.max(1, total));
      const payload = { stage: stage.replace(/#\d+$/, ''), step: `${index + 1}/${total}` };
      if (!started) {
        started = true;
        bar.start(1000, overall, payload);
      } else bar.update(overall, payload);
      // The last step done: end the bar before the closing log lines are written.
      if (index === total - 1 && fraction >= 1) stop();
    },
    stop,
  };
}
