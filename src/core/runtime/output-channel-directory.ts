import { type OutputChannel } from 'src/core/channels/output-channel';

/** Builds the output channel of a configured input channel (or null: collect the messages). */
export type OutputChannelFactory = () => OutputChannel | null;

/**
 * Where `output_channel=<name>` (and reminders, `latest`) send the bot's messages. The channel
 * modules register the output channel of each configured channel by name when the application
 * starts; a name nobody registered resolves to null, and the messages are returned in
 * `messages` instead (Rasa's CollectingOutputChannel).
 */
export class OutputChannelDirectory {
  private readonly factories = new Map<string, OutputChannelFactory>();

  register(name: string, factory: OutputChannelFactory): void {
    this.factories.set(name, factory);
  }

  resolve(name: string): OutputChannel | null {
    return this.factories.get(name)?.() ?? null;
  }
}
