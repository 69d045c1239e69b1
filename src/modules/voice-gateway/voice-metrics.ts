import { Injectable } from '@nestjs/common';
import { type TurnLatency } from 'src/core';
import { registerMetricsText } from 'src/platform/metrics/text-sources';

type Field =
  | 'speechEndToAudioMs'
  | 'asrMs'
  | 'processingMs'
  | 'ttsFirstByteMs'
  | 'transcriptToAudioMs'
  | 'parleyAddedMs';
const FIELDS: Field[] = [
  'speechEndToAudioMs',
  'asrMs',
  'processingMs',
  'ttsFirstByteMs',
  'transcriptToAudioMs',
  'parleyAddedMs',
];
const NAMES: Record<Field, string> = {
  speechEndToAudioMs: 'speech_end_to_audio',
  asrMs: 'asr',
  processingMs: 'processing',
  ttsFirstByteMs: 'tts_first_byte',
  transcriptToAudioMs: 'transcript_to_audio',
  parleyAddedMs: 'parley_added',
};

/** Turns kept per stage for the quantiles (the latest ones). */
const RECENT = 1000;

/**
 * Voice counters and per-turn latency sums, exported in the Prometheus text format at
 * `/webhooks/genesys/metrics` and, appended, at `GET /metrics`.
 */
@Injectable()
export class VoiceMetrics {
  constructor() {
    registerMetricsText('voice', () => this.render());
  }

  activeCalls = 0;
  callsTotal = 0;
  bargeInsTotal = 0;
  refusedConnectionsTotal = 0;
  droppedTranscriptsTotal = 0;
  rejectedNoisesTotal = 0;
  private readonly sums = new Map<Field, { sum: number; count: number }>();
  /** The latest turns' values per stage (seconds), for the quantiles. */
  private readonly recent = new Map<Field, number[]>();

  recordTurn(latency: TurnLatency): void {
    for (const field of FIELDS) {
      const value = latency[field];
      if (value === null) continue;
      const entry = this.sums.get(field) ?? { sum: 0, count: 0 };
      entry.sum += value / 1000;
      entry.count += 1;
      this.sums.set(field, entry);
      const recent = this.recent.get(field) ?? [];
      recent.push(value / 1000);
      if (recent.length > RECENT) recent.shift();
      this.recent.set(field, recent);
    }
  }

  render(): string {
    const lines = [
      '# TYPE parley_voice_active_calls gauge',
      `parley_voice_active_calls ${this.activeCalls}`,
      '# TYPE parley_voice_calls_total counter',
      `parley_voice_calls_total ${this.callsTotal}`,
      '# TYPE parley_voice_barge_ins_total counter',
      `parley_voice_barge_ins_total ${this.bargeInsTotal}`,
      '# TYPE parley_voice_refused_connections_total counter',
      `parley_voice_refused_connections_total ${this.refusedConnectionsTotal}`,
      '# TYPE parley_voice_dropped_transcripts_total counter',
      `parley_voice_dropped_transcripts_total ${this.droppedTranscriptsTotal}`,
      '# TYPE parley_voice_rejected_noises_total counter',
      `parley_voice_rejected_noises_total ${this.rejectedNoisesTotal}`,
      '# TYPE parley_voice_turn_latency_seconds summary',
    ];
    for (const field of FIELDS) {
      const entry = this.sums.get(field) ?? { sum: 0, count: 0 };
      const sorted = [...(this.recent.get(field) ?? [])].sort((a, b) => a - b);
      for (const q of [0.5, 0.95]) {
        if (sorted.length === 0) continue;
        const value = sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
        lines.push(
          `parley_voice_turn_latency_seconds{stage="${NAMES[field]}",quantile="${q}"} ${value}`,
        );
      }
      lines.push(`parley_voice_turn_latency_seconds_sum{stage="${NAMES[field]}"} ${entry.sum}`);
      lines.push(`parley_voice_turn_latency_seconds_count{stage="${NAMES[field]}"} ${entry.count}`);
    }
    return `${lines.join('\n')}\n`;
  }
}
