import { Injectable } from '@nestjs/common';
import { type OutputChannel } from 'src/core';

/** Builds the output channel of a configured input channel (or null: collect the messages). */
export type OutputChannelFactory = () => OutputChannel | null;

/**
 * Where `output_channel=<name>` (and reminders, `latest`) send the bot's messages. Channel
 * modules register their output channels by name at start (`register('callback', …)`); a name
 * nobody registered resolves to null, and the messages are returned in `messages` instead
 * (Rasa's CollectingOutputChannel).
 */
@Injectable()
export class OutputChannelRegistry {
  private readonly factories = new Map<string, OutputChannelFactory>();

  register(name: string, factory: OutputChannelFactory): void {
    this.factories.set(name, factory);
  }

  resolve(name: string): OutputChannel | null {
    return this.factories.get(name)?.() ?? null;
  }
}
