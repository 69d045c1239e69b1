import { type SlotDefinition } from 'src/core/domain/slot-definition';
import { type Flow } from 'src/core/flows/flow';
import { type FlowsList } from 'src/core/flows/flows-list';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { postOpenAi } from './openai-http';

/**
 * Flow retrieval for LLM command generators: rank the user flows by similarity to the latest
 * user turns and offer only the best `num_flows` to the LLM. Offline by default (BM25 over each
 * flow's name, description and collected slots); with an embeddings endpoint configured, cosine
 * similarity of OpenAI-compatible embeddings instead (flow documents embedded once, cached).
 */

export interface EmbeddingsConfig {
  readonly model: string;
  /** Base URL of an OpenAI-compatible API (`…/v1`); `/embeddings` is appended. */
  readonly apiBase: string;
  readonly apiKey: string | null;
  readonly timeoutMs: number;
}

export interface FlowRetrievalConfig {
  readonly active: boolean;
  readonly numFlows: number;
  readonly turnsToEmbed: number;
  readonly shouldEmbedSlots: boolean;
  readonly embeddings: EmbeddingsConfig | null;
}

export const DEFAULT_FLOW_RETRIEVAL: FlowRetrievalConfig = {
  active: true,
  numFlows: 20,
  turnsToEmbed: 1,
  shouldEmbedSlots: true,
  embeddings: null,
};

/** `[flow id, score]`, best first (`flows_from_semantic_search`). */
export type ScoredFlow = [string, number];

/** The text a flow is ranked by: name, description and (optionally) its collected slots. */
export function flowDocument(
  flow: Flow,
  flows: FlowsList,
  slots: readonly SlotDefinition[],
  withSlots = true,
): string {
  const parts = [`${flow.name}: ${flow.description}`];
  if (withSlots) {
    const defs = new Map(slots.map((s) => [s.name, s]));
    for (const step of flows.collectSteps(flow.id)) {
      const values = defs.get(step.collect)?.values;
      let line = `${step.collect}`;
      if (step.description) line += `: ${step.description}`;
      if (values && values.length > 0) line += ` (${values.map(String).join(', ')})`;
      parts.push(line);
    }
  }
  return parts.join('\n');
}

/** Lower-cased word tokens; `snake_case` and `kebab-case` split into words. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

const K1 = 1.2;
const B = 0.75;

/** BM25 scores of each document for the query, best first (ties keep document order). */
export function bm25Rank(
  documents: readonly { readonly id: string; readonly text: string }[],
  query: string,
): ScoredFlow[] {
  const docs = documents.map((d) => ({ id: d.id, tokens: tokenize(d.text) }));
  const n = docs.length;
  if (n === 0) return [];
  const avgLength = docs.reduce((sum, d) => sum + d.tokens.length, 0) / n || 1;
  const df = new Map<string, number>();
  for (const d of docs) for (const t of new Set(d.tokens)) df.set(t, (df.get(t) ?? 0) + 1);
  const queryTerms = [...new Set(tokenize(query))];
  const scored = docs.map((d, index) => {
    const tf = new Map<string, number>();
    for (const t of d.tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    let score = 0;
    for (const term of queryTerms) {
      const f = tf.get(term) ?? 0;
      if (f === 0) continue;
      const docFreq = df.get(term) ?? 0;
      const idf = Math.log(1 + (n - docFreq + 0.5) / (docFreq + 0.5));
      score += (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.tokens.length) / avgLength));
    }
    return { id: d.id, score, index };
  });
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  return scored.map((s) => [s.id, s.score]);
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** An embeddings endpoint that failed or answered something unusable. */
export class EmbeddingsError extends Error {}

/** The query: the last `turnsToEmbed` user turns, the new message being the last one. */
export function retrievalQuery(
  tracker: DialogueStateTracker,
  text: string,
  turnsToEmbed: number,
): string {
  const userTexts: string[] = [];
  for (const e of tracker.appliedEvents()) {
    if (e.type === 'user' && e.text) userTexts.push(e.text);
  }
  userTexts.push(text);
  return userTexts.slice(-Math.max(1, turnsToEmbed)).join('\n');
}

export class FlowRetrieval {
  private readonly documentEmbeddings = new Map<string, number[]>();

  constructor(
    readonly config: FlowRetrievalConfig,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  /**
   * Ranks `candidates` (user flows that may be offered) for the new message; the best
   * `numFlows`, best first. Link-only flows (`if: false`) are never ranked.
   */
  async rank(
    candidates: readonly Flow[],
    flows: FlowsList,
    tracker: DialogueStateTracker,
    text: string,
  ): Promise<ScoredFlow[]> {
    const ranked = candidates.filter((f) => f.guard !== 'false');
    const documents = ranked.map((f) => ({
      id: f.id,
      text: flowDocument(f, flows, tracker.slots, this.config.shouldEmbedSlots),
    }));
    const query = retrievalQuery(tracker, text, this.config.turnsToEmbed);
    const scored =
      this.config.embeddings === null
        ? bm25Rank(documents, query)
        : await this.embeddingRank(this.config.embeddings, documents, query);
    return scored.slice(0, Math.max(0, this.config.numFlows));
  }

  private async embeddingRank(
    config: EmbeddingsConfig,
    documents: readonly { id: string; text: string }[],
    query: string,
  ): Promise<ScoredFlow[]> {
    const missing = [...new Set(documents.map((d) => d.text))].filter(
      (t) => !this.documentEmbeddings.has(t),
    );
    const inputs = [...missing, query];
    const vectors = await this.embed(config, inputs);
    missing.forEach((t, i) => this.documentEmbeddings.set(t, vectors[i] as number[]));
    const queryVector = vectors[vectors.length - 1] as number[];
    const scored = documents.map((d, index) => ({
      id: d.id,
      score: cosine(queryVector, this.documentEmbeddings.get(d.text) ?? []),
      index,
    }));
    scored.sort((a, b) => b.score - a.score || a.index - b.index);
    return scored.map((s) => [s.id, s.score]);
  }

  private async embed(config: EmbeddingsConfig, input: readonly string[]): Promise<number[][]> {
    const body = await postOpenAi(
      this.fetchImpl,
      config,
      'embeddings',
      { model: config.model, input },
      (message) => new EmbeddingsError(message),
      'embeddings endpoint',
    );
    const data = (body as { data?: unknown }).data;
    if (!Array.isArray(data) || data.length !== input.length) {
      throw new EmbeddingsError('The embeddings endpoint answered without one vector per input.');
    }
    const out: number[][] = new Array<number[]>(input.length);
    data.forEach((item: unknown, i) => {
      const entry = item as { embedding?: unknown; index?: unknown };
      const index = typeof entry.index === 'number' ? entry.index : i;
      if (!Array.isArray(entry.embedding)) {
        throw new EmbeddingsError('The embeddings endpoint answered an entry without a vector.');
      }
      out[index] = entry.embedding as number[];
    });
    return out;
  }
}
