import { Injectable } from '@nestjs/common';

/** Counts training jobs in progress (shown by `GET /status`). */
@Injectable()
export class TrainingJobs {
  private running = 0;

  active(): number {
    return this.running;
  }

  async track<T>(job: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await job();
    } finally {
      this.running--;
    }
  }
}
