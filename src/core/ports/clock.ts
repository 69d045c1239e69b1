/** Port: the current time as Rasa counts it — seconds since the epoch, with a fraction. */
export abstract class Clock {
  abstract now(): number;
}

export class SystemClock extends Clock {
  now(): number {
    return Date.now() / 1000;
  }
}
