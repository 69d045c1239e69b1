import { Injectable } from '@nestjs/common';
import { deserializeEvent, validateEventsPayload } from 'src/core';
import { TrackerSideEffects } from 'src/modules/tracker/side-effects';
import { DialogueService } from './dialogue.service';

/** `execute_side_effects=true` on append events: posted bot events are sent, reminders scheduled. */
@Injectable()
export class DialogueSideEffects extends TrackerSideEffects {
  constructor(private readonly dialogue: DialogueService) {
    super();
  }

  async execute(conversationId: string, body: unknown, outputChannel: unknown): Promise<void> {
    const checked = validateEventsPayload(body);
    if (!checked.ok) return;
    const now = Date.now() / 1000;
    const events = checked.events.map((r) => deserializeEvent(r, () => now));
    await this.dialogue.executeSideEffects(conversationId, events, outputChannel);
  }
}
