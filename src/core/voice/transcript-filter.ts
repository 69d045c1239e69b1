/**
 * Which final recognition results deserve a caller turn: not empty, not only fillers ("oh",
 * "uh", "um", "hmm", …), and not below the engine's confidence when it reports one.
 */
export interface TranscriptFilterOptions {
  /** Words that alone never make a turn (lower case). */
  readonly fillers: readonly string[];
  /** Results with a confidence (0–1) below this are dropped; 0 keeps everything. */
  readonly minConfidence: number;
}

export const DEFAULT_FILLERS: readonly string[] = [
  'oh',
  'uh',
  'um',
  'umm',
  'uhm',
  'er',
  'erm',
  'ah',
  'eh',
  'hm',
  'hmm',
  'mm',
  'mhm',
  'huh',
];

export const DEFAULT_TRANSCRIPT_FILTER: TranscriptFilterOptions = {
  fillers: DEFAULT_FILLERS,
  minConfidence: 0.4,
};

export type TranscriptVerdict =
  | { readonly accepted: true; readonly text: string }
  | { readonly accepted: false; readonly reason: 'empty' | 'filler' | 'low_confidence' };

/** Words of a transcript, lower case, without punctuation and pocketsphinx markers. */
export function transcriptWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/<[^>]*>|\[[^\]]*\]|\(\d+\)/g, ' ') // <sil>, [NOISE], hello(2)
    .replace(/[^\p{L}\p{N}\s']/gu, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 0);
}

export class TranscriptFilter {
  private readonly fillers: ReadonlySet<string>;

  constructor(private readonly options: TranscriptFilterOptions = DEFAULT_TRANSCRIPT_FILTER) {
    this.fillers = new Set(options.fillers.map((f) => f.toLowerCase()));
  }

  judge(text: string, confidence?: number | null): TranscriptVerdict {
    const words = transcriptWords(text);
    if (words.length === 0) return { accepted: false, reason: 'empty' };
    if (words.every((w) => this.fillers.has(w))) return { accepted: false, reason: 'filler' };
    if (
      typeof confidence === 'number' &&
      Number.isFinite(confidence) &&
      confidence < this.options.minConfidence
    ) {
      return { accepted: false, reason: 'low_confidence' };
    }
    return { accepted: true, text: text.trim() };
  }
}
