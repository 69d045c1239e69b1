/** A recognition result: interim results may change, a final one is a complete utterance. */
export interface RecognitionEvent {
  readonly kind: 'interim' | 'final';
  readonly text: string;
  /** Engine confidence 0–1 when it reports one (Deepgram; pocketsphinx word posteriors). */
  readonly confidence?: number;
}

/**
 * Streaming speech recognition for one call: caller audio (µ-law, 8 kHz, mono) in, interim and
 * final transcripts out.
 */
export interface SpeechRecognizer {
  sendAudio(audio: Uint8Array): void;
  /**
   * True when the engine wants only the speech the call's speech gate lets through (pre-roll,
   * speech, hangover) followed by `endOfSpeech()`; false/absent: every audio frame (cloud
   * engines with their own endpointing).
   */
  readonly gated?: boolean;
  /** The gate heard the end of an utterance (gated engines finish it at once). */
  endOfSpeech?(): void;
  onEvent(listener: (event: RecognitionEvent) => void): void;
  /** Reports an engine failure (the call goes on without recognition). */
  onError(listener: (error: Error) => void): void;
  close(): Promise<void>;
}

/** Speech synthesis: text in, µ-law 8 kHz mono audio chunks out, in order. */
export interface SpeechSynthesizer {
  synthesize(text: string): AsyncIterable<Uint8Array>;
}
