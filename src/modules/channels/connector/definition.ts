import type { ConversationReader } from 'src/core';
import type { ChannelCredentials } from 'src/modules/channels/credentials';
import type { ChannelInput } from 'src/modules/channels/input/channel-input';
import type { IdempotentIngress } from 'src/modules/idempotency';
import type { Connector } from './connector';

/**
 * What the channels module needs to know of one messaging connector: its `credentials.yml` key
 * (also its URL segment, `/webhooks/<key>/`), the settings it reads, how it checks them and how
 * it is built. Each connector folder exports one; `connectors.ts` lists them. Adding a platform
 * is a folder and one line there.
 */
export interface ConnectorDefinition<S = unknown> {
  /** The key in credentials.yml, Rasa's channel name (`slack`, `twilio`, `botframework` …). */
  readonly key: string;
  /** The settings it reads; others are warned about and ignored, as Rasa ignores them. */
  readonly keys: readonly string[];
  /**
   * The routes below `/webhooks/<key>/` it serves besides the health route, as Express paths
   * (`webhook`, `set_webhook`, `webhook/:conversation/activities` …); each request to one is
   * handed to `Connector.handle` with the matched path.
   */
  readonly routes: readonly string[];
  /** Checks the entry; throws `CONFIG.INVALID` naming the key (see `invalid`). */
  settings(file: string, entry: ChannelCredentials): S;
  /**
   * What the operator should know of a checked entry, logged once at start: above all a
   * webhook that cannot be authenticated because the entry, copied from a Rasa project, lacks
   * the secret Parley checks requests with (the connector then accepts them, as Rasa does).
   */
  warnings?(settings: S): string[];
  /**
   * The connector of a checked entry; `conversations` reads a tracker (Twilio Voice reprompts
   * with the last bot message), null in unit tests.
   */
  create(
    settings: S,
    input: ChannelInput,
    ingress: IdempotentIngress | null,
    conversations: ConversationReader | null,
  ): Connector;
}

/** Ties a definition's settings type to its functions. */
export function connectorDefinition<S>(definition: ConnectorDefinition<S>): ConnectorDefinition {
  return definition;
}
