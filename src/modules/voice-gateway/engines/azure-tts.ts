import { type SpeechSynthesizer } from 'src/core';

export interface AzureTtsOptions {
  readonly apiKey: string;
  /** Full URL of `cognitiveservices/v1`. */
  readonly endpoint: string;
  readonly language: string;
  readonly voice: string;
  readonly timeoutMs: number;
}

/** The message of a failed `fetch` (undici hides the reason, e.g. ECONNREFUSED, in `cause`). */
export function fetchFailure(error: unknown): string {
  const e = error as { name?: string; message?: string; cause?: { message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out';
  return e.cause?.message !== undefined ? `${e.message}: ${e.cause.message}` : String(e.message);
}

function escapeXml(text: string): string {
  return text.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c] ?? c,
  );
}

/** SSML for one utterance in one voice. */
export function azureSsml(text: string, language: string, voice: string): string {
  return (
    `<speak version='1.0' xmlns='http://www.w3.org/2001/10/synthesis' xml:lang='${escapeXml(language)}'>` +
    `<voice name='${escapeXml(voice)}'>${escapeXml(text)}</voice></speak>`
  );
}

/**
 * Azure text to speech over REST: POST SSML to `https://<region>.tts.speech.microsoft.com/
 * cognitiveservices/v1` with `X-Microsoft-OutputFormat: raw-8khz-8bit-mono-mulaw` (µ-law 8 kHz,
 * no header, exactly what Genesys plays); the response body is streamed on as it arrives.
 * Auth: `Ocp-Apim-Subscription-Key: <AZURE_SPEECH_KEY>`.
 */
export class AzureTts implements SpeechSynthesizer {
  constructor(private readonly options: AzureTtsOptions) {}

  static fromOptions(
    apiKey: string,
    region: string | null,
    options: Readonly<Record<string, unknown>>,
  ): AzureTts {
    const where = typeof options.region === 'string' ? options.region : region;
    return new AzureTts({
      apiKey,
      endpoint:
        typeof options.endpoint === 'string'
          ? options.endpoint
          : `https://${where ?? 'eastus'}.tts.speech.microsoft.com/cognitiveservices/v1`,
      language: typeof options.language === 'string' ? options.language : 'en-US',
      voice: typeof options.voice === 'string' ? options.voice : 'en-US-JennyNeural',
      timeoutMs: typeof options.timeout === 'number' ? options.timeout * 1000 : 10_000,
    });
  }

  async *synthesize(text: string): AsyncIterable<Uint8Array> {
    const clean = text.replace(/\s+/g, ' ').trim();
    if (clean.length === 0) return;
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    let response: Response;
    try {
      response = await fetch(this.options.endpoint, {
        method: 'POST',
        headers: {
          'Ocp-Apim-Subscription-Key': this.options.apiKey,
          'Content-Type': 'application/ssml+xml',
          'X-Microsoft-OutputFormat': 'raw-8khz-8bit-mono-mulaw',
          'User-Agent': 'parley',
        },
        body: azureSsml(clean, this.options.language, this.options.voice),
        signal,
      });
    } catch (error) {
      throw new Error(`azure TTS: ${fetchFailure(error)}`);
    }
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      throw new Error(`azure TTS: HTTP ${response.status} ${response.statusText}`.trim());
    }
    const type = response.headers.get('content-type') ?? '';
    if (/json|text|xml|html/i.test(type)) {
      await response.body.cancel();
      throw new Error(`azure TTS: expected audio, got ${type}`);
    }
    try {
      for await (const chunk of response.body) yield chunk;
    } catch (error) {
      throw new Error(`azure TTS: ${fetchFailure(error)}`);
    }
  }
}
