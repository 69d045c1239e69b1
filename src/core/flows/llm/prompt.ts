import { type SlotDefinition } from 'src/core/domain/slot-definition';
import { type Flow } from 'src/core/flows/flow';
import { type FlowsList } from 'src/core/flows/flows-list';
import { renderTemplate } from 'src/core/flows/jinja';
import { type DialogueStack } from 'src/core/flows/stack';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

/**
 * What an LLM command generator's prompt template is rendered with (Rasa's variable names), and
 * Parley's default templates for the v1 (single-step) and v2 (compact) action syntaxes.
 */

export interface PromptSlot {
  readonly name: string;
  readonly description: string | null;
  readonly allowed_values: readonly unknown[] | null;
}

export interface PromptFlow {
  /** The flow id. */
  readonly name: string;
  readonly description: string;
  readonly slots: readonly PromptSlot[];
}

export interface PromptFlowSlot {
  readonly name: string;
  /** The slot's value, or the string `undefined` while unset. */
  readonly value: unknown;
  readonly type: string;
  readonly allowed_values: readonly unknown[] | null;
  readonly description: string | null;
}

export interface PromptInputs {
  readonly available_flows: readonly PromptFlow[];
  readonly current_conversation: string;
  readonly user_message: string;
  readonly current_flow: string | null;
  readonly current_slot: string | null;
  readonly current_slot_description: string | null;
  readonly current_slot_type: string | null;
  readonly current_slot_allowed_values: readonly unknown[] | null;
  readonly flow_slots: readonly PromptFlowSlot[];
  readonly is_repeat_command_enabled: boolean;
}

/** Transcript lines kept in `current_conversation` (before the new message). */
export const TRANSCRIPT_MAX_TURNS = 20;

/** A message as one transcript line: newlines become spaces. */
export function sanitizeForPrompt(text: string | null): string {
  return (text ?? '').replace(/\r?\n/g, ' ');
}

/** `USER: …` / `AI: …` lines of the conversation so far, the last `maxTurns` of them. */
export function readableTranscript(
  tracker: DialogueStateTracker,
  maxTurns = TRANSCRIPT_MAX_TURNS,
): string {
  const lines: string[] = [];
  for (const event of tracker.appliedEvents()) {
    if (event.type === 'user') lines.push(`USER: ${sanitizeForPrompt(event.text)}`);
    else if (event.type === 'bot') lines.push(`AI: ${sanitizeForPrompt(event.text)}`);
  }
  return lines.slice(-maxTurns).join('\n');
}

/** The values the prompt lists for a slot: a bool's `[True, False]`, a categorical's values. */
export function allowedValues(slot: SlotDefinition | undefined): readonly unknown[] | null {
  if (slot === undefined) return null;
  if (slot.type === 'bool') return [true, false];
  if (slot.type === 'categorical') return (slot.values ?? []).filter((v) => v !== '__other__');
  return null;
}

interface CurrentStep {
  readonly flowId: string | null;
  readonly slot: string | null;
  readonly slotDescription: string | null;
}

function currentStep(stack: DialogueStack, flows: FlowsList): CurrentStep {
  const top = stack.topFlowFrame();
  if (top === undefined) return { flowId: null, slot: null, slotDescription: null };
  const flowId = String(top.flow_id);
  const step = flows.step(flowId, String(top.step_id));
  if (step?.kind === 'collect') {
    return { flowId, slot: step.collect, slotDescription: step.description };
  }
  return { flowId, slot: null, slotDescription: null };
}

export interface PromptInputsRequest {
  readonly text: string;
  readonly tracker: DialogueStateTracker;
  /** All flows (to look the stack's current flow and step up). */
  readonly flows: FlowsList;
  /** The user flows offered to the LLM, in order. */
  readonly flowsInPrompt: readonly Flow[];
  readonly stack: DialogueStack;
}

/**
 * Builds the prompt variables. The tracker holds the conversation before the new message
 * (`text`), which is appended to the transcript as the last `USER:` line.
 */
export function buildPromptInputs(request: PromptInputsRequest): PromptInputs {
  const { tracker, flows, stack } = request;
  const slotDefs = new Map(tracker.slots.map((s) => [s.name, s]));
  const current = currentStep(stack, flows);
  const isExtractable = (slot: string, askBeforeFilling: boolean): boolean =>
    slotDefs.has(slot) &&
    (!askBeforeFilling || tracker.getSlot(slot) != null || current.slot === slot);

  const available_flows = request.flowsInPrompt.map((flow) => ({
    name: flow.id,
    description: flow.description,
    slots: flows
      .collectSteps(flow.id)
      .filter((step) => isExtractable(step.collect, step.askBeforeFilling))
      .map((step) => ({
        name: step.collect,
        description: step.description,
        allowed_values: allowedValues(slotDefs.get(step.collect)),
      })),
  }));

  const flow_slots =
    current.flowId === null
      ? []
      : flows
          .collectSteps(current.flowId)
          .filter((step) => isExtractable(step.collect, step.askBeforeFilling))
          .map((step) => {
            const def = slotDefs.get(step.collect);
            const value = tracker.getSlot(step.collect);
            return {
              name: step.collect,
              value: value ?? 'undefined',
              type: def?.type ?? 'any',
              allowed_values: allowedValues(def),
              description: step.description,
            };
          });

  const message = sanitizeForPrompt(request.text);
  const transcript = readableTranscript(tracker);
  const currentSlotDef = current.slot === null ? undefined : slotDefs.get(current.slot);
  return {
    available_flows,
    current_conversation: transcript ? `${transcript}\nUSER: ${message}` : `USER: ${message}`,
    user_message: message,
    current_flow: current.flowId,
    current_slot: current.slot,
    current_slot_description: current.slotDescription,
    current_slot_type: currentSlotDef?.type ?? null,
    current_slot_allowed_values: allowedValues(currentSlotDef),
    flow_slots,
    is_repeat_command_enabled: flows.flow('pattern_repeat_bot_messages') !== undefined,
  };
}

/** Renders a prompt template with the inputs. */
export function renderPrompt(template: string, inputs: PromptInputs): string {
  return renderTemplate(template, { ...inputs });
}

/** Parley's default prompt for the v1 action syntax (single-step generators). */
export const DEFAULT_PROMPT_TEMPLATE_V1 = `You turn the latest message of a conversation into actions for an assistant built from business processes called flows. Choose the actions that start flows, fill their slots, or route the message elsewhere.

Flows you may start, with their descriptions and the slots they collect:
{% for flow in available_flows %}
{{ flow.name }}: {{ flow.description }}
{%- for slot in flow.slots %}
    slot: {{ slot.name }}{% if slot.description %} ({{ slot.description }}){% endif %}{% if slot.allowed_values %}, allowed values: {{ slot.allowed_values }}{% endif %}
{%- endfor %}
{%- endfor %}

===
The conversation so far:
{{ current_conversation }}

===
{% if current_flow != None -%}
The active flow is "{{ current_flow }}".
{%- if current_slot %} The assistant just asked for the slot "{{ current_slot }}"{% if current_slot_description %} ({{ current_slot_description }}){% endif %}.{% endif %}
{%- if flow_slots|length > 0 %}
Slots of the active flow:
{%- for slot in flow_slots %}
- name: {{ slot.name }}, value: {{ slot.value }}, type: {{ slot.type }}{% if slot.description %}, description: {{ slot.description }}{% endif %}{% if slot.allowed_values %}, allowed values: {{ slot.allowed_values }}{% endif %}
{%- endfor %}
{%- endif %}
{%- else -%}
No flow is active, so no slot can be set unless you also start the flow that collects it.
{%- endif %}

The user's latest message is """{{ user_message }}""".

===
Available actions, written exactly like this:
* StartFlow(flow_name) to start a flow, e.g. StartFlow(transfer_money)
* SetSlot(slot_name, slot_value) to fill a slot, e.g. SetSlot(recipient, Freddy)
* CancelFlow() to stop the active flow
* Clarify(flow_name_1, flow_name_2) when several flows could be meant
* SkipQuestion() when the user wants to skip the current question
* SearchAndReply() for questions that need knowledge rather than a flow
* ChitChat() for small talk
* HumanHandoff() when the user wants a human
{%- if is_repeat_command_enabled %}
* RepeatLastBotMessages() when the user wants the last answer repeated
{%- endif %}

Write one action per line, in order. Only use values the user actually gave; never invent placeholders. When unsure which flow is meant, clarify. If you start a flow, start it before setting its slots.

Actions:
`;

/** Parley's default prompt for the compact (v2) action syntax. */
export const DEFAULT_PROMPT_TEMPLATE_V2 = `## Task
Turn the user's latest message into actions for an assistant built from business processes called flows.

## Actions (one per line, written exactly like this)
* \`start flow flow_name\`: start a flow
* \`set slot slot_name slot_value\`: fill or correct a slot
* \`cancel flow\`: stop the active flow
* \`disambiguate flows flow_name_1 flow_name_2\`: several flows could be meant
* \`provide info\`: answer a question that needs knowledge rather than a flow
* \`offtopic reply\`: small talk
* \`hand over\`: the user wants a human
* \`skip question\`: the user wants to skip the current question
{%- if is_repeat_command_enabled %}
* \`repeat message\`: the user wants the last answer repeated
{%- endif %}

## Flows
{%- for flow in available_flows %}
- {{ flow.name }}: {{ flow.description }}
{%- for slot in flow.slots %}
  - slot {{ slot.name }}{% if slot.description %}: {{ slot.description }}{% endif %}{% if slot.allowed_values %} (allowed values: {{ slot.allowed_values }}){% endif %}
{%- endfor %}
{%- endfor %}

## Current state
{% if current_flow != None -%}
Active flow: {{ current_flow }}
{%- if current_slot %}
Requested slot: {{ current_slot }}{% if current_slot_type %} ({{ current_slot_type }}){% endif %}{% if current_slot_description %}: {{ current_slot_description }}{% endif %}
{%- endif %}
{%- for slot in flow_slots %}
- {{ slot.name }} = {{ slot.value }} ({{ slot.type }})
{%- endfor %}
{%- else -%}
No flow is active.
{%- endif %}

## Conversation
{{ current_conversation }}

## Your actions for """{{ user_message }}""":
`;
