import { randomUUID } from 'node:crypto';
import { DialogueError, type ParseData } from 'src/core';

export type EmulationMode = 'wit' | 'luis' | 'dialogflow';

const MODES: readonly EmulationMode[] = ['wit', 'luis', 'dialogflow'];

/** `emulation_mode` query value: absent → null; wit/luis/dialogflow in any case; else 400. */
export function emulationModeParam(value: unknown): EmulationMode | null {
  if (value === undefined) return null;
  const mode = typeof value === 'string' ? value.toLowerCase() : '';
  if (!(MODES as readonly string[]).includes(mode)) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      "Invalid parameter value for 'emulation_mode'. Should be one of 'WIT', 'LUIS', 'DIALOGFLOW'.",
      { parameter: 'emulation_mode', in: 'query' },
    );
  }
  return mode as EmulationMode;
}

interface LooseEntity {
  entity: string;
  value: unknown;
  start?: number;
  end?: number;
  role?: string;
  confidence_entity?: number;
  extractor?: string;
}

interface LooseIntent {
  name?: string | null;
  confidence?: number;
}

function entitiesOf(data: ParseData): LooseEntity[] {
  return data.entities;
}

function intentOf(data: ParseData): LooseIntent {
  return data.intent;
}

function wit(data: ParseData): Record<string, unknown> {
  const entities: Record<string, unknown[]> = {};
  for (const e of entitiesOf(data)) {
    const role = e.role ?? e.entity;
    entities[`${e.entity}:${role}`] = [
      {
        confidence: e.confidence_entity || 1,
        name: e.entity,
        value: e.value,
        body: data.text.slice(e.start ?? 0, e.end ?? 0),
        start: e.start,
        end: e.end,
        role,
        entities: [],
      },
    ];
  }
  return { text: data.text, intents: [data.intent], entities };
}

function luis(data: ParseData): Record<string, unknown> {
  const intent = intentOf(data);
  const top = intent.name ? intent : null;
  const intents: Record<string, { score: number | undefined }> = {};
  if (data.intent_ranking.length) {
    for (const r of data.intent_ranking) if (r.name) intents[r.name] = { score: r.confidence };
  } else if (top !== null && top.name) {
    intents[top.name] = { score: top.confidence };
  }
  const instance: Record<string, unknown[]> = {};
  const entities: Record<string, unknown> = { $instance: instance };
  for (const e of entitiesOf(data)) {
    const key = e.role ?? e.entity;
    entities[key] = [e.value];
    instance[key] = [
      {
        role: e.role ?? null,
        type: e.entity,
        text: e.value,
        startIndex: e.start ?? null,
        length: e.end !== undefined && e.start !== undefined ? e.end - e.start : null,
        score: e.confidence_entity ?? null,
        modelType: e.extractor ?? null,
      },
    ];
  }
  return {
    query: data.text,
    prediction: {
      normalizedQuery: data.text,
      topIntent: top?.name ?? null,
      intents,
      entities,
    },
  };
}

function dialogflow(data: ParseData): Record<string, unknown> {
  const parameters: Record<string, unknown[]> = {};
  for (const e of entitiesOf(data)) (parameters[e.entity] ??= []).push(e.value);
  const intent = intentOf(data);
  const name = intent.name ?? null;
  return {
    responseId: randomUUID(),
    queryResult: {
      queryText: data.text,
      action: name,
      parameters,
      fulfillmentText: '',
      fulfillmentMessages: [],
      outputContexts: [],
      intent: { name, displayName: name },
      intentDetectionConfidence: intent.confidence ?? 0,
    },
  };
}

/** Rasa's response emulators: only the response JSON changes. */
export function emulate(mode: EmulationMode | null, data: ParseData): unknown {
  switch (mode) {
    case 'wit':
      return wit(data);
    case 'luis':
      return luis(data);
    case 'dialogflow':
      return dialogflow(data);
    case null:
      return data;
  }
}
