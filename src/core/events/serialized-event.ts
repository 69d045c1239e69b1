/**
 * An event as it travels on the wire and is stored: the JSON dict of Rasa's `event.as_dict()`,
 * always carrying its `event` type name.
 */
export type SerializedEvent = Record<string, unknown> & { event: string };
