import { type Domain } from 'src/core/domain/domain';
import { DialogueError } from 'src/core/errors/dialogue-error';
import {
  CONTINUE_STEP_PREFIX,
  END_STEP,
  isPatternFlow,
  START_STEP,
  type ConditionalBranch,
  type ElseBranch,
  type Flow,
  type FlowStep,
} from './flow';
import { allSteps, type FlowsList } from './flows-list';
import { parsePredicate, predicateIdentifiers } from './predicate';

/**
 * What Rasa checks of flows. Structural checks (fatal when the flows are read: one flow's shape,
 * then rules across flows) return Rasa's messages, which name the flow; the validator checks
 * against a domain (`rasa data validate flows`, run by `rasa train`) return errors and
 * warnings, each naming the file and the flow.
 */

export const PATTERN_HUMAN_HANDOFF = 'pattern_human_handoff';
export const PATTERN_CHITCHAT = 'pattern_chitchat';
export const PATTERN_INTERNAL_ERROR = 'pattern_internal_error';

const FLOW_ID_RE = /^[a-zA-Z0-9_][a-zA-Z0-9_-]*$/;
const SLOT_NAME_RE = /^[a-zA-Z_][a-zA-Z0-9_-]*$/;

/** Where a flow comes from, for messages. */
export function flowSource(flow: Flow): string {
  return flow.filePath ?? (flow.builtIn ? 'default patterns' : 'flows');
}

type Branch = ConditionalBranch | ElseBranch;

function branches(step: FlowStep): readonly Branch[] {
  return Array.isArray(step.next) ? (step.next as readonly Branch[]) : [];
}

function branchTarget(b: Branch): string | readonly FlowStep[] {
  return 'then' in b ? b.then : b.else;
}

/** Where a link of a step points: a step id, or the first step of a nested list. */
function linkTargets(step: FlowStep): string[] {
  if (typeof step.next === 'string') return [step.next];
  return branches(step).flatMap((b) => {
    const t = branchTarget(b);
    if (typeof t === 'string') return [t];
    return t[0] ? [t[0].id] : [];
  });
}

/** The structural problems of one flow (Rasa's `validate_flow` and step-id uniqueness). */
export function flowStructureErrors(flow: Flow): string[] {
  const f = flow.id;
  if (flow.steps.length === 0) return [`Flow '${f}' does not have any steps.`];
  const steps = allSteps(flow.steps);
  const errors: string[] = [];
  for (const s of steps) {
    if (branches(s).some((b) => Array.isArray(branchTarget(b)) && branchTarget(b).length === 0)) {
      errors.push(`Encountered an empty step sequence in flow '${f}' and step '${s.id}'.`);
    }
  }
  for (const s of steps) {
    if (s.kind === 'link') {
      if (s.next !== null) {
        errors.push(
          `Link step '${s.id}' in flow '${f}' has a \`next\` but as a link step is not allowed to have one.`,
        );
      }
    } else if (s.next === null || (Array.isArray(s.next) && s.next.length === 0)) {
      errors.push(
        `Step '${s.id}' in flow '${f}' is missing a \`next\`. As a last step of a branch, it is required to have one.`,
      );
    }
  }
  const ids = new Set(steps.map((s) => s.id));
  for (const s of steps) {
    for (const target of linkTargets(s)) {
      if (!ids.has(target) && target !== START_STEP && target !== END_STEP) {
        errors.push(
          `Step with id '${target}' could not be resolved. 'Step '${s.id}' in flow '${f}' ` +
            `referenced this step but it does not exist. Please make sure that the step is defined in the same flow.`,
        );
      }
    }
  }
  const byId = new Map(steps.map((s) => [s.id, s]));
  const reached = new Set<string>();
  const pending = [flow.steps[0] as FlowStep];
  while (pending.length > 0) {
    const s = pending.pop() as FlowStep;
    if (reached.has(s.id)) continue;
    reached.add(s.id);
    for (const t of linkTargets(s)) {
      const target = t === START_STEP ? flow.steps[0] : byId.get(t);
      if (target) pending.push(target);
    }
  }
  for (const s of steps) {
    if (!reached.has(s.id)) {
      errors.push(
        `Step '${s.id}' in flow '${f}' can not be reached from the start step. Please make sure ` +
          `that all steps can be reached from the start step, e.g. by checking that another step points to this step.`,
      );
    }
  }
  for (const s of steps) {
    const bs = branches(s);
    if (bs.some((b) => 'if' in b) && !bs.some((b) => 'else' in b)) {
      errors.push(
        `Step '${s.id}' in flow '${f}' is missing an \`else\` branch. If a steps \`next\` statement ` +
          `contains an \`if\` it always also needs an \`else\` branch. Please add the missing \`else\` branch.`,
      );
    }
  }
  for (const s of steps) {
    if (s.id === START_STEP || s.id === END_STEP || s.id.startsWith(CONTINUE_STEP_PREFIX)) {
      errors.push(
        `Step '${s.id}' in flow '${f}' is using the reserved id '${s.id}'. Please use a different id for your step.`,
      );
    }
  }
  for (const s of steps) {
    if (s.kind === 'collect' && !SLOT_NAME_RE.test(s.collect)) {
      errors.push(
        `For the flow '${f}', collect step '${s.id}' the slot name was set to : ${s.collect}, ` +
          `while it has to adhere to the following pattern: [a-zA-Z_][a-zA-Z0-9_-]*?.`,
      );
    }
  }
  if (!FLOW_ID_RE.test(f)) {
    errors.push(
      `The flow ID was set to : ${f}, while it has to adhere to the following pattern: [a-zA-Z0-9_][a-zA-Z0-9_-]*?.`,
    );
  }
  const seen = new Set<string>();
  for (const s of steps) {
    if (seen.has(s.id)) {
      errors.push(
        `Step '${s.id}' in flow '${f}' is using the same id as another step. Step ids must be ` +
          `unique across all steps of a flow. Please use a different id for your step.`,
      );
    }
    seen.add(s.id);
  }
  return errors;
}

/** Rules across flows: trigger intents, call and link targets, what patterns may reference. */
export function flowsListStructureErrors(flows: FlowsList): string[] {
  const errors: string[] = [];
  const byIntent = new Map<string, string[]>();
  for (const flow of flows.flows) {
    for (const intent of new Set(flow.nluTrigger.map((t) => t.intent))) {
      byIntent.set(intent, [...(byIntent.get(intent) ?? []), flow.name]);
    }
  }
  for (const [intent, names] of byIntent) {
    if (names.length > 1) {
      errors.push(
        `The intent '${intent}' is used as 'nlu_trigger' in multiple flows: ` +
          `[${names.map((n) => `'${n}'`).join(', ')}]. An intent should just trigger one flow, not multiple.`,
      );
    }
  }
  const usesLink = (id: string): boolean => flows.allSteps(id).some((s) => s.kind === 'link');
  for (const flow of flows.flows) {
    const pattern = isPatternFlow(flow.id);
    for (const s of flows.allSteps(flow.id)) {
      if (s.kind === 'call') {
        if (usesLink(s.call)) {
          errors.push(
            `Flow '${flow.id}' is calling another flow (call step). The flow that is getting called ` +
              `('${s.call}') is using a link step, which is not allowed. Either this flow can not be ` +
              `called or the link step in ${s.id} needs to be removed.`,
          );
        }
        if (flows.flow(s.call) === undefined) {
          errors.push(
            `The call step '${s.id}' in flow '${flow.id}' is invalid: there is no flow with the id '${s.call}'.`,
          );
        }
        if (isPatternFlow(s.call)) {
          errors.push(
            `Step '${s.id}' in flow '${flow.id}' is referencing a pattern '${s.call}', which is not allowed. ` +
              `Patterns can not be used as a target for a call step.`,
          );
        }
        if (pattern) {
          errors.push(
            isPatternFlow(s.call)
              ? `Step '${s.id}' in pattern '${flow.id}' is referencing a pattern which is not allowed. Patterns can not use call steps to other patterns.`
              : `Step '${s.id}' in pattern '${flow.id}' is referencing a flow which is not allowed. Patterns can not use call steps.`,
          );
        }
      }
      if (s.kind === 'link') {
        const allowedPattern =
          s.link === PATTERN_HUMAN_HANDOFF || (pattern && s.link === PATTERN_CHITCHAT);
        if (flows.flow(s.link) === undefined && !allowedPattern) {
          errors.push(
            `Flow '${s.link}' is linked from flow '${flow.id}' in step '${s.id}', but it doesn't exist. ` +
              `Please make sure that a flow with id '${s.link}' exists.`,
          );
        }
        if (isPatternFlow(s.link) && !allowedPattern) {
          errors.push(
            pattern
              ? `Step '${s.id}' in pattern '${flow.id}' is referencing a pattern which is not allowed. ` +
                  `Patterns can not use link steps to other patterns. Exception: patterns can link to 'pattern_human_handoff'.`
              : `Step '${s.id}' in flow '${flow.id}' is referencing a pattern '${s.link}', which is not allowed. ` +
                  `Patterns cannot be used as a target in link steps, except for 'pattern_human_handoff', which may be ` +
                  `linked from both user-defined flows and other patterns. 'pattern_chitchat' may only be linked from other patterns.`,
          );
        } else if (flow.id === PATTERN_INTERNAL_ERROR && !isPatternFlow(s.link)) {
          errors.push(
            `Step '${s.id}' in pattern '${flow.id}' is referencing a flow which is not allowed. ` +
              `'pattern_internal_error' can not use link steps to user flows.`,
          );
        }
      }
    }
  }
  return errors;
}

/**
 * Throws `TRAINING_DATA.INVALID` for the first structural problem of the flows (each flow's
 * shape, then the rules across flows); the message names the flow's file.
 */
export function assertValidFlowsStructure(flows: FlowsList): void {
  for (const flow of flows.flows) {
    const [first] = flowStructureErrors(flow);
    if (first !== undefined) throw structureError(flowSource(flow), flow.id, first);
  }
  const [first] = flowsListStructureErrors(flows);
  if (first !== undefined) {
    const flow = flows.flows.find((f) => first.includes(`'${f.id}'`));
    throw structureError(flow ? flowSource(flow) : 'flows', flow?.id ?? null, first);
  }
}

function structureError(file: string, flow: string | null, problem: string): DialogueError {
  return new DialogueError('TRAINING_DATA.INVALID', `${file}: ${problem}`, {
    file,
    ...(flow === null ? {} : { flow }),
    problem,
  });
}

export interface FlowsValidationResult {
  readonly errors: string[];
  readonly warnings: string[];
}

const TEMPLATE_PLACEHOLDER = '__template__';

/** The predicate with Jinja parts replaced by a placeholder (the validator's dummy context). */
function renderDummy(predicate: string): string {
  return predicate
    .replace(/\{%[\s\S]*?%\}/g, '')
    .replace(/\{\{[\s\S]*?\}\}/g, TEMPLATE_PLACEHOLDER);
}

const NULLISH = ['null', 'none', 'undefined', 'empty'];

/**
 * Rasa's validator checks of flows against the domain: collected and set slots exist (and are
 * not list slots), each collect has exactly one way to ask, action steps name domain actions,
 * link targets exist, names and descriptions are unique, predicates parse and read known
 * slots with allowed values, `persisted_slots` are used by the flow.
 */
export function validateFlows(flows: FlowsList, domain: Domain): FlowsValidationResult {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (flows.isEmpty) {
    warnings.push('No flows were found in the data files. Will not proceed with flow validation.');
    return { errors, warnings };
  }
  const actions = new Set(domain.actionNamesOrTexts);
  const responses = domain.responses;

  for (const flow of flows.flows) {
    const at = (message: string): string => `${flowSource(flow)}: ${message}`;
    const err = (message: string): void => void errors.push(at(message));
    const warn = (message: string): void => void warnings.push(at(message));
    const inStep = (s: FlowStep): string => `step '${s.id}' of flow '${flow.id}'`;

    const checkPredicate = (predicate: string, where: string, isGuard: boolean): void => {
      const rendered = renderDummy(predicate);
      try {
        parsePredicate(rendered);
      } catch (e) {
        err(`Detected invalid condition '${predicate}' in ${where}: ${(e as Error).message}.`);
        return;
      }
      const identifiers = predicateIdentifiers(rendered);
      // Judged on the text as written: `'{{context.x}}' = 'y'` reads the context.
      const namespaced = /\b(slots|context)\./.test(predicate);
      if (!namespaced && (!isGuard || identifiers.length > 0)) {
        err(
          `Predicate '${predicate}' in ${where} does not use the namespace 'slots.' or 'context.'; ` +
            `unquoted names are looked up in one of them (quote string values).`,
        );
      }
      for (const ident of identifiers) {
        if (!ident.startsWith('slots.') || ident.includes(TEMPLATE_PLACEHOLDER)) continue;
        const name = ident.slice('slots.'.length).split('.')[0] as string;
        if (domain.slot(name) === undefined) {
          err(`The slot '${name}' is used in ${where}, but it is not listed in the domain slots.`);
        }
      }
      for (const { slot, value } of slotComparisons(rendered)) {
        const def = domain.slot(slot);
        if (def === undefined || NULLISH.includes(value.toLowerCase())) continue;
        if (def.type === 'categorical') {
          const allowed = (def.values ?? []).map((v) => String(v).toLowerCase());
          if (!allowed.includes(value.toLowerCase())) {
            err(
              `The value '${value}' compared with the categorical slot '${slot}' in ${where} is not ` +
                `one of its values (${(def.values ?? []).map(String).join(', ')}).`,
            );
          }
        } else if (def.type === 'bool' && !['true', 'false'].includes(value.toLowerCase())) {
          err(
            `The boolean slot '${slot}' is compared with '${value}' in ${where}; boolean slots can ` +
              `only be compared with true or false.`,
          );
        }
      }
    };

    if (flow.guard !== null) {
      checkPredicate(flow.guard, `the flow guard of flow '${flow.id}'`, true);
    }

    const slotsUsed = new Set<string>();
    for (const s of allSteps(flow.steps)) {
      for (const b of branches(s)) {
        if ('if' in b) checkPredicate(b.if, inStep(s), false);
      }
      if (s.kind === 'collect') {
        slotsUsed.add(s.collect);
        for (const r of s.rejections) {
          checkPredicate(r.if, `a rejection of ${inStep(s)}`, false);
          if (!(r.utter in responses)) {
            warn(
              `The response '${r.utter}' of a rejection in ${inStep(s)} is not defined in the domain.`,
            );
          }
        }
        const slot = domain.slot(s.collect);
        if (slot === undefined) {
          err(
            `The slot '${s.collect}' is collected in ${inStep(s)}, but it is not listed in the domain ` +
              `slots. You should add it to your domain file!`,
          );
          continue;
        }
        if (slot.type === 'list') {
          err(
            `The slot '${s.collect}' collected in ${inStep(s)} is a list slot; collect steps cannot fill list slots.`,
          );
        }
        const hasUtter = s.utter in responses;
        const hasAction = actions.has(s.collectAction);
        if (hasUtter && hasAction) {
          err(
            `The collect ${inStep(s)} has both a response '${s.utter}' and an action ` +
              `'${s.collectAction}' to ask for slot '${s.collect}'; keep only one of them.`,
          );
        } else if (
          !hasUtter &&
          !hasAction &&
          (slot.initialValue === null || slot.initialValue === undefined)
        ) {
          err(
            `The collect ${inStep(s)} has neither a response '${s.utter}' nor an action ` +
              `'${s.collectAction}' to ask for slot '${s.collect}'; add one of them to the domain.`,
          );
        }
        if (!s.resetAfterFlowEnds) {
          if (flow.persistedSlots.length > 0) {
            err(
              `Flow '${flow.id}' sets 'persisted_slots' and its collect step for slot '${s.collect}' ` +
                `sets 'reset_after_flow_ends'; use only 'persisted_slots'.`,
            );
          } else {
            warn(
              `The collect ${inStep(s)} uses 'reset_after_flow_ends', which is deprecated; list the slot ` +
                `under the flow's 'persisted_slots' instead.`,
            );
          }
        }
      } else if (s.kind === 'set_slots') {
        for (const { name } of s.slots) {
          slotsUsed.add(name);
          const slot = domain.slot(name);
          if (slot === undefined) {
            err(
              `The slot '${name}' is set in ${inStep(s)}, but it is not listed in the domain slots.`,
            );
          } else if (slot.type === 'list') {
            err(
              `The slot '${name}' set in ${inStep(s)} is a list slot; set_slots steps cannot set list slots.`,
            );
          }
        }
      } else if (s.kind === 'action') {
        if (s.action.includes('{{') || s.action.includes('{%') || s.action.includes('{context.')) {
          continue;
        }
        if (!actions.has(s.action)) {
          err(
            `The action '${s.action}' is used in ${inStep(s)}, but it is not listed in the domain file.`,
          );
        }
      } else if (s.kind === 'link') {
        const allowed =
          s.link === PATTERN_HUMAN_HANDOFF ||
          (isPatternFlow(flow.id) && s.link === PATTERN_CHITCHAT);
        if (flows.flow(s.link) === undefined && !allowed) {
          err(`The flow '${s.link}' linked in ${inStep(s)} does not exist.`);
        }
      }
    }
    const unused = flow.persistedSlots.filter((p) => !slotsUsed.has(p));
    if (unused.length > 0) {
      err(
        `Flow '${flow.id}' lists ${unused.map((u) => `'${u}'`).join(', ')} under 'persisted_slots', ` +
          `but only slots the flow collects or sets can be persisted.`,
      );
    }
  }

  const names = new Map<string, string>();
  const descriptions = new Map<string, string>();
  for (const flow of flows.flows) {
    const firstByName = names.get(flow.name);
    if (firstByName !== undefined) {
      errors.push(
        `${flowSource(flow)}: Detected duplicate flow name '${flow.name}' for flow id '${flow.id}' ` +
          `(also used by flow '${firstByName}'). Flow names must be unique.`,
      );
    } else names.set(flow.name, flow.id);
    const key = flow.description.replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, '');
    const firstByDescription = descriptions.get(key);
    if (firstByDescription !== undefined) {
      errors.push(
        `${flowSource(flow)}: Detected duplicate flow description for flow id '${flow.id}' (same as ` +
          `flow '${firstByDescription}'). Flow descriptions must be unique.`,
      );
    } else descriptions.set(key, flow.id);
  }
  return { errors, warnings };
}

/** `slots.x <op> value` / `value <op> slots.x` equality comparisons of a predicate's text. */
function slotComparisons(predicate: string): { slot: string; value: string }[] {
  const value = `("[^"]*"|'[^']*'|[^\\s()]+)`;
  const op = `(?:==|=|!=|\\bis\\s+not\\b|\\bis\\b)`;
  const out: { slot: string; value: string }[] = [];
  const strip = (v: string): string => v.replace(/^(["'])([\s\S]*)\1$/, '$2');
  for (const m of predicate.matchAll(
    new RegExp(`\\bslots\\.([\\w-]+)\\s*${op}\\s*${value}`, 'gi'),
  )) {
    if (!(m[2] as string).startsWith('slots.')) {
      out.push({ slot: m[1] as string, value: strip(m[2] as string) });
    }
  }
  for (const m of predicate.matchAll(new RegExp(`${value}\\s*${op}\\s*slots\\.([\\w-]+)`, 'gi'))) {
    const v = m[1] as string;
    if (!v.startsWith('slots.') && !/^(is|not)$/i.test(v)) {
      out.push({ slot: m[2] as string, value: strip(v) });
    }
  }
  return out.filter((c) => !c.value.includes(TEMPLATE_PLACEHOLDER));
}
