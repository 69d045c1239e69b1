import { type JsonObject } from 'src/core/events/event-base';
import { type Flow, type FlowStep, type StepNext } from './flow';
import { type FlowsList } from './flows-list';

/**
 * The flows as Rasa serialises them (`Flow.as_json`), which is also the `GET /flows` body: one
 * object per flow, merged default patterns included, steps with their resolved ids and links.
 */
export function flowsToJson(flows: FlowsList): JsonObject[] {
  return flows.flows.map(flowToJson);
}

export function flowToJson(flow: Flow): JsonObject {
  const out: JsonObject = { id: flow.id, steps: flow.steps.map(stepToJson) };
  if (flow.nameGiven !== false) out.name = flow.name;
  out.description = flow.description;
  if (flow.guard !== null) out.if = flow.guard;
  if (flow.alwaysIncludeInPrompt !== null) {
    out.always_include_in_prompt = flow.alwaysIncludeInPrompt;
  }
  if (flow.nluTrigger.length > 0) {
    out.nlu_trigger = flow.nluTrigger.map((t) => ({
      intent: { name: t.intent, confidence_threshold: t.confidenceThreshold },
    }));
  }
  if (flow.filePath) out.file_path = flow.filePath;
  if (flow.persistedSlots.length > 0) out.persisted_slots = [...flow.persistedSlots];
  out.run_pattern_completed = flow.runPatternCompleted;
  return out;
}

function nextToJson(next: StepNext): unknown {
  if (typeof next === 'string') return next;
  return next.map((b) => {
    if ('then' in b) {
      return { if: b.if, then: typeof b.then === 'string' ? b.then : b.then.map(stepToJson) };
    }
    return { else: typeof b.else === 'string' ? b.else : b.else.map(stepToJson) };
  });
}

export function stepToJson(step: FlowStep): JsonObject {
  const out: JsonObject = { id: step.id };
  switch (step.kind) {
    case 'action':
      out.action = step.action;
      break;
    case 'collect':
      out.collect = step.collect;
      break;
    case 'link':
      out.link = step.link;
      break;
    case 'call':
      out.call = step.call;
      break;
    case 'set_slots':
      out.set_slots = step.slots.map((s) => ({ [s.name]: s.value }));
      break;
    case 'noop':
      out.noop = true;
      break;
  }
  if (step.description) out.description = step.description;
  if (step.next !== null && !(Array.isArray(step.next) && step.next.length === 0)) {
    out.next = nextToJson(step.next);
  }
  if (step.metadata && Object.keys(step.metadata).length > 0) out.metadata = step.metadata;
  if (step.kind === 'collect') {
    out.utter = step.utter;
    out.ask_before_filling = step.askBeforeFilling;
    out.reset_after_flow_ends = step.resetAfterFlowEnds;
    out.rejections = step.rejections.map((r) => ({ if: r.if, utter: r.utter }));
  }
  return out;
}
