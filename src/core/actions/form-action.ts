import { ActionExecutionRejection, type Action, type ActionContext } from 'src/core/actions/action';
import { requiredSlots, runActionExtractSlots } from 'src/core/actions/slot-extraction';
import { ACTION_LISTEN_NAME, REQUESTED_SLOT } from 'src/core/domain/domain-constants';
import { actionExecuted } from 'src/core/events/action-executed';
import { activeLoop } from 'src/core/events/active-loop';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { slotSet } from 'src/core/events/slot-set';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

/**
 * A form (Rasa `FormAction`, a loop): activates itself, validates what the user gave (through
 * the `validate_<form>` custom action when the domain lists it), asks for the next empty
 * required slot with `utter_ask_<form>_<slot>` / `utter_ask_<slot>` (or `action_ask_…`), and
 * deactivates when every required slot is filled. When a slot was requested but nothing was
 * extracted it rejects its execution so other policies can handle the turn.
 */
export class FormAction implements Action {
  constructor(readonly name: string) {}

  async run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const events: DialogueEvent[] = [];
    const original = ctx.tracker;
    const activating = original.activeLoopName !== this.name;
    if (activating) {
      events.push(activeLoop({ name: this.name, timestamp: ctx.now() }));
      events.push(...(await this.activate(ctx)));
    }
    if (!this.isDone(events)) events.push(...(await this.do(ctx, events, activating)));
    if (this.isDone(events)) events.push(activeLoop({ name: null, timestamp: ctx.now() }));
    return events;
  }

  private temporary(ctx: ActionContext, extra: readonly DialogueEvent[]): DialogueStateTracker {
    const t = new DialogueStateTracker(ctx.tracker.senderId, ctx.domain.slots);
    for (const e of ctx.tracker.eventsAfterLatestRestart()) t.update(e);
    t.update(
      slotSet({
        name: REQUESTED_SLOT,
        value: ctx.tracker.getSlot(REQUESTED_SLOT) ?? null,
        timestamp: ctx.now(),
      }),
    );
    t.update(actionExecuted({ name: this.name, timestamp: ctx.now() }));
    for (const e of extra) t.update(e);
    return t;
  }

  private async activate(ctx: ActionContext): Promise<DialogueEvent[]> {
    // Rasa runs the whole `action_extract_slots` again (custom mappings included) at activation.
    const extracted = await runActionExtractSlots(ctx);
    const probe = ctx.tracker.copy();
    for (const e of extracted) probe.update(e);
    const prefilled = requiredSlots(ctx.domain, this.name)
      .filter((s) => probe.getSlot(s) !== null && probe.getSlot(s) !== undefined)
      .map((s) => slotSet({ name: s, value: probe.getSlot(s), timestamp: ctx.now() }));
    if (prefilled.length === 0) return [];
    return this.validateSlots(ctx, prefilled);
  }

  private async validateSlots(
    ctx: ActionContext,
    candidates: DialogueEvent[],
  ): Promise<DialogueEvent[]> {
    const validator = `validate_${this.name}`;
    if (!ctx.domain.actionNamesOrTexts.includes(validator)) return candidates;
    const tracker = this.temporary(ctx, candidates);
    return ctx.actionFor(validator).run({ ...ctx, tracker });
  }

  private async do(
    ctx: ActionContext,
    soFar: readonly DialogueEvent[],
    activating: boolean,
  ): Promise<DialogueEvent[]> {
    const t = ctx.tracker;
    const needsValidation =
      activating ||
      (t.latestActionName === ACTION_LISTEN_NAME && !(t.activeLoop?.isInterrupted ?? false));
    const events: DialogueEvent[] = needsValidation
      ? await this.validate(ctx)
      : await this.validateSlots(ctx, []);
    const all = [...soFar, ...events];
    if (this.isDone(all)) {
      return [...events, slotSet({ name: REQUESTED_SLOT, value: null, timestamp: ctx.now() })];
    }
    let toRequest: unknown = null;
    for (const e of all) if (e.type === 'slot' && e.name === REQUESTED_SLOT) toRequest = e.value;
    const temp = this.temporary(ctx, all);
    const requestEvents: DialogueEvent[] = [];
    if (!toRequest) {
      toRequest =
        requiredSlots(ctx.domain, this.name).find((s) => {
          const v = temp.getSlot(s);
          return v === null || v === undefined;
        }) ?? null;
      requestEvents.push(slotSet({ name: REQUESTED_SLOT, value: toRequest, timestamp: ctx.now() }));
    }
    if (typeof toRequest === 'string' && toRequest) {
      const ask = this.askAction(ctx, toRequest);
      const asked = ask === null ? [] : await ctx.actionFor(ask).run({ ...ctx, tracker: temp });
      return [...events, ...requestEvents, ...asked];
    }
    return [...events, slotSet({ name: REQUESTED_SLOT, value: null, timestamp: ctx.now() })];
  }

  private async validate(ctx: ActionContext): Promise<DialogueEvent[]> {
    const t = ctx.tracker;
    const required = requiredSlots(ctx.domain, this.name);
    const toFill = t.getSlot(REQUESTED_SLOT);
    const sinceUser: DialogueEvent[] = [];
    const events = t.appliedEvents();
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i] as DialogueEvent;
      if (e.type === 'user') break;
      sinceUser.unshift(e);
    }
    const candidates = new Map<string, unknown>();
    for (const e of sinceUser) {
      if (e.type === 'slot' && (required.includes(e.name) || e.name === toFill)) {
        candidates.set(e.name, e.value);
      }
    }
    const validated = await this.validateSlots(
      ctx,
      [...candidates].map(([name, value]) => slotSet({ name, value, timestamp: ctx.now() })),
    );
    const someValidated = validated.some((e) => e.type === 'slot' && e.name !== REQUESTED_SLOT);
    const rejectedManually = validated.some((e) => e.type === 'action_execution_rejected');
    if (typeof toFill === 'string' && toFill && !someValidated && !rejectedManually) {
      throw new ActionExecutionRejection(
        this.name,
        `Failed to extract slot ${toFill} with action ${this.name}`,
      );
    }
    return validated;
  }

  private askAction(ctx: ActionContext, slot: string): string | null {
    const names = ctx.domain.actionNamesOrTexts;
    for (const candidate of [
      `action_ask_${this.name}_${slot}`,
      `utter_ask_${this.name}_${slot}`,
      `action_ask_${slot}`,
      `utter_ask_${slot}`,
    ]) {
      if (names.includes(candidate)) return candidate;
    }
    return null;
  }

  private isDone(events: readonly DialogueEvent[]): boolean {
    if (events.some((e) => e.type === 'action_execution_rejected')) return false;
    let lastRequested: DialogueEvent | undefined;
    let lastLoop: DialogueEvent | undefined;
    for (const e of events) {
      if (e.type === 'slot' && e.name === REQUESTED_SLOT) lastRequested = e;
      if (e.type === 'active_loop') lastLoop = e;
    }
    return (
      (lastRequested?.type === 'slot' && lastRequested.value === null) ||
      (lastLoop?.type === 'active_loop' && lastLoop.name === null)
    );
  }
}
