import { type JsonObject } from 'src/core/events/event-base';

/** Built-in slot types of Rasa 3.x. Other (dotted) type names are custom slot classes. */
export const BUILT_IN_SLOT_TYPES = ['text', 'bool', 'categorical', 'float', 'list', 'any'] as const;

export type BuiltInSlotType = (typeof BUILT_IN_SLOT_TYPES)[number];

/** A slot as the domain declares it (Rasa `Slot`). */
export interface SlotDefinition {
  readonly name: string;
  /** `text`, `bool`, `categorical`, `float`, `list`, `any`, or a custom class path. */
  readonly type: string;
  readonly initialValue: unknown;
  readonly influenceConversation: boolean;
  /** Categorical slots: the allowed values as declared. */
  readonly values?: readonly unknown[];
  /** Float slots: the featurisation range (defaults 0.0 and 1.0). */
  readonly minValue?: number;
  readonly maxValue?: number;
  /** Slot mappings, kept as declared. */
  readonly mappings: readonly JsonObject[];
  /** Every property as declared (minus `type`), for later consumers. */
  readonly properties: Readonly<JsonObject>;
}

export function isBuiltInSlotType(type: string): type is BuiltInSlotType {
  return (BUILT_IN_SLOT_TYPES as readonly string[]).includes(type);
}
