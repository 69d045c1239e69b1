/** Parse data in Rasa's shape, as far as a message without NLU can fill it. */
export interface RegexParseData {
  text: string;
  intent: { name?: string; confidence?: number };
  intent_ranking: Array<{ name: string; confidence: number }>;
  entities: Array<{ entity: string; value: unknown; start: number; end: number }>;
}

const INTENT_MESSAGE = /^\/([^{@\s]+)(@[0-9]*\.?[0-9]+)?(\{.*\})?\s*$/s;

/**
 * Rasa's `/intent{"entity": "value"}@0.9` shortcut, which bypasses NLU: the intent (with an
 * optional confidence, default 1) and entities given inline. Entities get the span of the JSON
 * part, as Rasa's RegexMessageHandler does. Any other text yields an empty intent.
 */
export function parseWithRegex(text: string): RegexParseData {
  const match = INTENT_MESSAGE.exec(text.trim());
  if (!match) return { text, intent: {}, intent_ranking: [], entities: [] };
  const name = match[1] ?? '';
  const confidence = match[2] !== undefined ? Math.min(1, Number(match[2].slice(1))) : 1;
  const entities: RegexParseData['entities'] = [];
  const json = match[3];
  if (json !== undefined) {
    const start = text.indexOf(json);
    try {
      const parsed: unknown = JSON.parse(json);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        for (const [entity, value] of Object.entries(parsed as Record<string, unknown>)) {
          for (const v of Array.isArray(value) ? value : [value]) {
            entities.push({ entity, value: v, start, end: start + json.length });
          }
        }
      }
    } catch {
      // Rasa ignores entities that are not valid JSON and keeps the intent.
    }
  }
  return {
    text,
    intent: { name, confidence },
    intent_ranking: [{ name, confidence }],
    entities,
  };
}
