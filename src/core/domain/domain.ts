import {
  DEFAULT_ACTION_NAMES,
  DEFAULT_CARRY_OVER_SLOTS_TO_NEW_SESSION,
  DEFAULT_INTENTS,
  DEFAULT_KNOWLEDGE_BASE_ACTION,
  DEFAULT_SESSION_EXPIRATION_TIME_IN_MINUTES,
  ENTITY_LABEL_SEPARATOR,
  LATEST_TRAINING_DATA_FORMAT_VERSION,
  REQUESTED_SLOT,
  SESSION_START_METADATA_SLOT,
  SLOT_LAST_OBJECT,
  SLOT_LAST_OBJECT_TYPE,
  SLOT_LISTED_ITEMS,
} from 'src/core/domain/domain-constants';
import { isBuiltInSlotType, type SlotDefinition } from 'src/core/domain/slot-definition';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject } from 'src/core/events/json-values';
import { parseYamlSource, type YamlSource } from 'src/core/training-data/yaml-source';

/** How conversation sessions behave (Rasa `SessionConfig`). */
export interface SessionConfig {
  /** Minutes of user inactivity after which a new session starts; 0 disables sessions. */
  readonly sessionExpirationTime: number;
  readonly carryOverSlots: boolean;
}

/** An intent with its entity settings (Rasa `intent_properties`). */
export interface IntentDefinition {
  readonly name: string;
  /** `use_entities` as declared: `true` (all) or the listed entities. */
  readonly useEntities: true | readonly string[];
  readonly ignoreEntities: readonly string[];
  /** Entities (incl. `entity#role` / `entity#group` labels) featurised for this intent, sorted. */
  readonly usedEntities: readonly string[];
  /** Other declared properties (`is_retrieval_intent`, `triggers`, …). */
  readonly properties: Readonly<JsonObject>;
}

/** An entity with its roles and groups. */
export interface EntityDefinition {
  readonly name: string;
  readonly roles?: readonly string[];
  readonly groups?: readonly string[];
  readonly influenceConversation: boolean;
}

interface DomainParts {
  readonly intents: readonly IntentDefinition[];
  readonly declaredIntents: readonly string[];
  readonly entities: readonly EntityDefinition[];
  readonly userSlots: readonly SlotDefinition[];
  readonly slots: readonly SlotDefinition[];
  readonly responses: Readonly<Record<string, readonly JsonObject[]>>;
  readonly customActions: readonly string[];
  readonly forms: Readonly<Record<string, JsonObject>>;
  readonly actionTexts: readonly string[];
  readonly sessionConfig: SessionConfig;
  readonly storeEntitiesAsSlots: boolean;
}

type Path = readonly (string | number)[];

/** Reports a problem at a path of the parsed document, with its line when known. */
type Fail = (path: Path, problem: string) => never;

/**
 * The universe the assistant acts in (Rasa `Domain`): intents, entities, slots, responses,
 * actions, forms and session settings. Immutable; built from YAML or a plain object.
 */
export class Domain {
  private readonly slotsByName: ReadonlyMap<string, SlotDefinition>;
  private readonly intentsByName: ReadonlyMap<string, IntentDefinition>;

  private constructor(private readonly parts: DomainParts) {
    this.slotsByName = new Map(parts.slots.map((s) => [s.name, s]));
    this.intentsByName = new Map(parts.intents.map((i) => [i.name, i]));
  }

  /** A domain with nothing declared (default intents, actions and slots only). */
  static empty(): Domain {
    return Domain.fromObject({});
  }

  /**
   * Parses a domain file. Invalid YAML or an invalid domain throws `DOMAIN.INVALID` whose
   * message names the source, the line (when known) and the problem.
   */
  static fromYaml(text: string, source = 'domain.yml'): Domain {
    const yaml = parseYamlSource(text, source, { code: 'DOMAIN.INVALID' });
    const data: unknown = yaml.doc.toJS({ maxAliasCount: 50 });
    return Domain.build(data ?? {}, source, failAt(yaml));
  }

  /** Builds a domain from the plain object a domain file holds. */
  static fromObject(data: unknown, source = 'domain'): Domain {
    return Domain.build(data ?? {}, source, (path, problem) => {
      const where = path.length > 0 ? ` (at ${path.join('.')})` : '';
      throw new DialogueError('DOMAIN.INVALID', `${source}: ${problem}${where}`, {
        file: source,
        path: [...path],
        problem,
      });
    });
  }

  private static build(data: unknown, _source: string, fail: Fail): Domain {
    if (!isJsonObject(data)) fail([], 'the domain must be a mapping');
    const entities = collectEntities(data.entities, fail);
    const intents = collectIntents(data.intents, entities, fail);
    const userSlots = collectSlots(data.slots, fail);
    const responses = collectResponses(data.responses, fail);
    const customActions = collectActions(data.actions, fail);
    const forms = collectForms(data.forms, fail);
    const actionTexts = stringList(data.e2e_actions, ['e2e_actions'], fail);
    const sessionConfig = collectSessionConfig(data.session_config, fail);
    const config = data.config ?? {};
    if (!isJsonObject(config)) fail(['config'], 'config must be a mapping');
    const store = config.store_entities_as_slots ?? true;
    if (typeof store !== 'boolean') {
      fail(['config', 'store_entities_as_slots'], 'store_entities_as_slots must be true or false');
    }
    const declaredIntents = intentNames(data.intents);

    const slots = [...userSlots];
    const names = (): string[] => slots.map((s) => s.name);
    const formNames = Object.keys(forms);
    if (formNames.length > 0 && !names().includes(REQUESTED_SLOT)) {
      slots.push(defaultSlot(REQUESTED_SLOT, 'text'));
    }
    const userActions = combineWithResponses(customActions, responses);
    if (userActions.includes(DEFAULT_KNOWLEDGE_BASE_ACTION)) {
      for (const name of [SLOT_LISTED_ITEMS, SLOT_LAST_OBJECT, SLOT_LAST_OBJECT_TYPE]) {
        if (!names().includes(name)) slots.push(defaultSlot(name, 'text'));
      }
    }
    if (!names().includes(SESSION_START_METADATA_SLOT)) {
      slots.push(defaultSlot(SESSION_START_METADATA_SLOT, 'any'));
    }

    return new Domain({
      intents,
      declaredIntents,
      entities,
      userSlots,
      slots,
      responses,
      customActions,
      forms,
      actionTexts,
      sessionConfig,
      storeEntitiesAsSlots: store,
    });
  }

  /** Every intent name incl. Rasa's default intents, sorted (computed once; do not change it). */
  get intents(): readonly string[] {
    this.intentNamesCache ??= this.parts.intents.map((i) => i.name).sort();
    return this.intentNamesCache;
  }

  private intentNamesCache: string[] | null = null;

  /** Intent properties incl. default intents. */
  get intentDefinitions(): readonly IntentDefinition[] {
    return this.parts.intents;
  }

  intent(name: string): IntentDefinition | undefined {
    return this.intentsByName.get(name);
  }

  /** Entity names, sorted (computed once; do not change it). */
  get entities(): readonly string[] {
    this.entityNamesCache ??= this.parts.entities.map((e) => e.name).sort();
    return this.entityNamesCache;
  }

  private entityNamesCache: string[] | null = null;

  get entityDefinitions(): readonly EntityDefinition[] {
    return this.parts.entities;
  }

  /** Every slot: the declared ones, then Rasa's defaults (`requested_slot`, …, `session_started_metadata`). */
  get slots(): readonly SlotDefinition[] {
    return this.parts.slots;
  }

  /** Only the slots declared in the domain file. */
  get userSlots(): readonly SlotDefinition[] {
    return this.parts.userSlots;
  }

  slot(name: string): SlotDefinition | undefined {
    return this.slotsByName.get(name);
  }

  /** Responses as declared (`utter_x` → variations). */
  get responses(): Readonly<Record<string, readonly JsonObject[]>> {
    return this.parts.responses;
  }

  /** Actions listed under `actions`. */
  get customActions(): readonly string[] {
    return this.parts.customActions;
  }

  /** Custom actions, then response names not listed as actions (sorted): Rasa's `user_actions`. */
  get userActions(): string[] {
    // The domain is immutable: computed once (callers must not change the list).
    this.userActionsCache ??= combineWithResponses(this.parts.customActions, this.parts.responses);
    return this.userActionsCache;
  }

  private userActionsCache: string[] | null = null;

  private actionNamesCache: string[] | null = null;

  /** Every action the assistant can run: defaults, user actions, forms, end-to-end texts. */
  get actionNamesOrTexts(): string[] {
    // The domain is immutable: computed once (callers must not change the list).
    this.actionNamesCache ??= this.computeActionNamesOrTexts();
    return this.actionNamesCache;
  }

  private computeActionNamesOrTexts(): string[] {
    const user = this.userActions.filter((a) => !DEFAULT_ACTION_NAMES.includes(a));
    const forms = this.formNames.filter((f) => !this.parts.customActions.includes(f));
    return [...DEFAULT_ACTION_NAMES, ...user, ...forms, ...this.parts.actionTexts];
  }

  /** The forms' names (computed once; do not change it). */
  get formNames(): readonly string[] {
    this.formNamesCache ??= Object.keys(this.parts.forms);
    return this.formNamesCache;
  }

  private formNamesCache: string[] | null = null;

  /** Forms as declared, each normalised to `{ required_slots, … }`. */
  get forms(): Readonly<Record<string, JsonObject>> {
    return this.parts.forms;
  }

  /**
   * Retrieval intents: those with responses `utter_<intent>/<key>` or `is_retrieval_intent`
   * (computed once; do not change it). Every `utter_` action lookup asks for them.
   */
  get retrievalIntents(): readonly string[] {
    this.retrievalIntentsCache ??= this.computeRetrievalIntents();
    return this.retrievalIntentsCache;
  }

  private retrievalIntentsCache: string[] | null = null;

  private computeRetrievalIntents(): string[] {
    const fromResponses = Object.keys(this.parts.responses)
      .filter((r) => r.startsWith('utter_') && r.includes('/'))
      .map((r) => (r.split('/')[0] as string).slice('utter_'.length));
    const flagged = this.parts.intents
      .filter((i) => i.properties.is_retrieval_intent === true)
      .map((i) => i.name);
    return [...new Set([...fromResponses, ...flagged])].sort();
  }

  /**
   * This domain with more responses (e.g. the retrieval responses `utter_faq/ask_x` of the NLU
   * data, which Rasa merges into the domain at training time). Declared responses win.
   */
  withResponses(extra: Readonly<Record<string, readonly JsonObject[]>>): Domain {
    if (Object.keys(extra).length === 0) return this;
    return new Domain({ ...this.parts, responses: { ...extra, ...this.parts.responses } });
  }

  get actionTexts(): readonly string[] {
    return this.parts.actionTexts;
  }

  get sessionConfig(): SessionConfig {
    return this.parts.sessionConfig;
  }

  get storeEntitiesAsSlots(): boolean {
    return this.parts.storeEntitiesAsSlots;
  }

  /** Nothing declared at all. */
  isEmpty(): boolean {
    return (
      this.parts.declaredIntents.length === 0 &&
      this.parts.entities.length === 0 &&
      this.parts.userSlots.length === 0 &&
      Object.keys(this.parts.responses).length === 0 &&
      this.parts.customActions.length === 0 &&
      Object.keys(this.parts.forms).length === 0 &&
      this.parts.actionTexts.length === 0
    );
  }

  /**
   * The domain as `GET /domain` returns it (Rasa's `Domain.as_dict()`): declared intents with
   * their `use_entities`/`ignore_entities`, entities, declared slots, responses, actions, forms,
   * end-to-end actions, session config and config.
   */
  toJSON(): JsonObject {
    const entityNames = this.entities;
    const intents = this.parts.intents
      .filter((i) => this.parts.declaredIntents.includes(i.name))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((i) => ({ [i.name]: intentForFile(i, entityNames) }));
    const entities = [...this.parts.entities]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((e): unknown => {
        if (!e.roles && !e.groups) return e.name;
        return {
          [e.name]: {
            ...(e.groups ? { groups: e.groups } : {}),
            ...(e.roles ? { roles: e.roles } : {}),
          },
        };
      });
    const slots: JsonObject = {};
    for (const s of this.parts.userSlots) {
      slots[s.name] = {
        type: s.type,
        initial_value: s.initialValue,
        influence_conversation: s.influenceConversation,
        mappings: s.mappings,
        ...(s.values !== undefined ? { values: s.values } : {}),
        ...(s.maxValue !== undefined ? { max_value: s.maxValue } : {}),
        ...(s.minValue !== undefined ? { min_value: s.minValue } : {}),
      };
    }
    return {
      version: LATEST_TRAINING_DATA_FORMAT_VERSION,
      intents,
      entities,
      slots,
      responses: this.parts.responses,
      actions: this.parts.customActions,
      forms: this.parts.forms,
      e2e_actions: this.parts.actionTexts,
      session_config: {
        session_expiration_time: this.parts.sessionConfig.sessionExpirationTime,
        carry_over_slots_to_new_session: this.parts.sessionConfig.carryOverSlots,
      },
      config: { store_entities_as_slots: this.parts.storeEntitiesAsSlots },
    };
  }
}

function failAt(yaml: YamlSource): Fail {
  return (path, problem) => {
    const node: unknown = path.length > 0 ? yaml.doc.getIn(path, true) : yaml.doc.contents;
    const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
    const line = range ? yaml.lines.linePos(range[0]).line : undefined;
    const where = line === undefined ? yaml.file : `${yaml.file}:${line}`;
    throw new DialogueError('DOMAIN.INVALID', `${where}: ${problem}`, {
      file: yaml.file,
      ...(line === undefined ? {} : { line }),
      path: [...path],
      problem,
    });
  };
}

function defaultSlot(name: string, type: 'text' | 'any'): SlotDefinition {
  return {
    name,
    type,
    initialValue: null,
    influenceConversation: false,
    mappings: [],
    properties: {},
  };
}

function combineWithResponses(
  actions: readonly string[],
  responses: Readonly<Record<string, unknown>>,
): string[] {
  // Retrieval responses (`utter_faq/ask_x`) are not actions; their intent's `utter_faq` is.
  const keys = Object.keys(responses);
  const retrieval = keys.filter((r) => r.includes('/')).map((r) => r.split('/')[0] as string);
  const utter = [...new Set([...keys.filter((r) => !r.includes('/')), ...retrieval])]
    .sort()
    .filter((r) => !actions.includes(r));
  return [...actions, ...utter];
}

function stringList(value: unknown, path: Path, fail: Fail): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(path, `${path.join('.')} must be a list`);
  return value.map((item, i) => {
    if (typeof item !== 'string') fail([...path, i], `${path.join('.')} entries must be strings`);
    return item;
  });
}

function checkUnique(names: readonly string[], what: string, path: Path, fail: Fail): void {
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) duplicates.add(n);
    seen.add(n);
  }
  if (duplicates.size > 0) {
    fail(path, `${what} are not unique: duplicate ${[...duplicates].sort().join(', ')}`);
  }
}

function collectEntities(value: unknown, fail: Fail): EntityDefinition[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(['entities'], 'entities must be a list');
  const result = value.map((entry, i): EntityDefinition => {
    if (typeof entry === 'string') return { name: entry, influenceConversation: true };
    if (isJsonObject(entry) && Object.keys(entry).length === 1) {
      const [name, props] = Object.entries(entry)[0] as [string, unknown];
      if (!isJsonObject(props)) {
        fail(
          ['entities', i],
          `the entity '${name}' cannot have an empty value; remove the ':' after its name or add properties`,
        );
      }
      const roles =
        props.roles === undefined
          ? undefined
          : stringList(props.roles, ['entities', i, name, 'roles'], fail);
      const groups =
        props.groups === undefined
          ? undefined
          : stringList(props.groups, ['entities', i, name, 'groups'], fail);
      return {
        name,
        ...(roles ? { roles } : {}),
        ...(groups ? { groups } : {}),
        influenceConversation: props.influence_conversation !== false,
      };
    }
    return fail(
      ['entities', i],
      'each entity must be a name or a mapping of one name to its properties',
    );
  });
  checkUnique(
    result.map((e) => e.name),
    'entities',
    ['entities'],
    fail,
  );
  return result;
}

function concatenateLabels(
  labels: ReadonlyMap<string, readonly string[]>,
  entity?: string,
): string[] {
  if (entity !== undefined) {
    return (labels.get(entity) ?? []).map((sub) => `${entity}${ENTITY_LABEL_SEPARATOR}${sub}`);
  }
  return [...labels.entries()].flatMap(([e, subs]) =>
    subs.map((sub) => `${e}${ENTITY_LABEL_SEPARATOR}${sub}`),
  );
}

function intentNames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.map((i) => (isJsonObject(i) ? (Object.keys(i)[0] ?? '') : String(i)));
}

function collectIntents(
  value: unknown,
  entities: readonly EntityDefinition[],
  fail: Fail,
): IntentDefinition[] {
  if (value !== undefined && value !== null && !Array.isArray(value)) {
    fail(['intents'], 'intents must be a list');
  }
  const declared = Array.isArray(value) ? value : [];
  const allEntities = entities.map((e) => e.name);
  const ignoredByDefault = entities.filter((e) => !e.influenceConversation).map((e) => e.name);
  const roles = new Map(entities.filter((e) => e.roles).map((e) => [e.name, e.roles ?? []]));
  const groups = new Map(entities.filter((e) => e.groups).map((e) => [e.name, e.groups ?? []]));

  const build = (name: string, props: JsonObject, path: Path): IntentDefinition => {
    const rawUse = props.use_entities ?? true;
    const useEntities: true | string[] =
      rawUse === true
        ? true
        : rawUse === false
          ? []
          : stringList(rawUse, [...path, 'use_entities'], fail);
    const ignoreEntities =
      props.ignore_entities === undefined || props.ignore_entities === null
        ? ignoredByDefault
        : stringList(props.ignore_entities, [...path, 'ignore_entities'], fail);
    const included = new Set<string>();
    if (useEntities === true) {
      for (const e of allEntities) if (!ignoredByDefault.includes(e)) included.add(e);
      for (const l of [...concatenateLabels(roles), ...concatenateLabels(groups)]) included.add(l);
    } else {
      for (const e of useEntities) {
        included.add(e);
        for (const l of [...concatenateLabels(roles, e), ...concatenateLabels(groups, e)]) {
          included.add(l);
        }
      }
    }
    const excluded = new Set<string>();
    for (const e of ignoreEntities) {
      excluded.add(e);
      for (const l of [...concatenateLabels(roles, e), ...concatenateLabels(groups, e)]) {
        excluded.add(l);
      }
    }
    const properties = { ...props };
    delete properties.use_entities;
    delete properties.ignore_entities;
    return {
      name,
      useEntities,
      ignoreEntities,
      usedEntities: [...included].filter((e) => !excluded.has(e)).sort(),
      properties,
    };
  };

  const result = declared.map((entry, i): IntentDefinition => {
    if (typeof entry === 'string') return build(entry, {}, ['intents', i]);
    if (isJsonObject(entry) && Object.keys(entry).length === 1) {
      const [name, props] = Object.entries(entry)[0] as [string, unknown];
      if (!isJsonObject(props) || Object.keys(props).length === 0) {
        fail(
          ['intents', i],
          `the intent '${name}' cannot have an empty value; remove the ':' after its name or add properties`,
        );
      }
      return build(name, props, ['intents', i, name]);
    }
    return fail(
      ['intents', i],
      'each intent must be a name or a mapping of one name to its properties',
    );
  });
  checkUnique(
    result.map((i) => i.name),
    'intents',
    ['intents'],
    fail,
  );
  for (const name of DEFAULT_INTENTS) {
    if (!result.some((i) => i.name === name)) result.push(build(name, {}, ['intents']));
  }
  return result;
}

function intentForFile(intent: IntentDefinition, entityNames: readonly string[]): JsonObject {
  const use = intent.usedEntities.filter((e) => !e.includes(ENTITY_LABEL_SEPARATOR));
  const out: JsonObject = { ...intent.properties };
  if (use.length === entityNames.length) {
    out.use_entities = true;
  } else if (use.length <= entityNames.length / 2) {
    out.use_entities = [...use].sort();
  } else {
    out.ignore_entities = entityNames.filter((e) => !use.includes(e)).sort();
  }
  return out;
}

function collectSlots(value: unknown, fail: Fail): SlotDefinition[] {
  if (value === undefined || value === null) return [];
  if (!isJsonObject(value)) {
    fail(['slots'], 'slots must be a mapping of slot names to their properties');
  }
  return Object.entries(value).map(([name, props]): SlotDefinition => {
    const path = ['slots', name];
    if (!isJsonObject(props)) fail(path, `slot '${name}' must be a mapping of its properties`);
    const type = props.type;
    if (typeof type !== 'string' || type === '') fail(path, `slot '${name}' needs a 'type'`);
    if (!isBuiltInSlotType(type) && !type.includes('.')) {
      fail(
        [...path, 'type'],
        `failed to find slot type '${type}' of slot '${name}': it is neither a known type ` +
          `(text, bool, categorical, float, list, any) nor a custom slot class path`,
      );
    }
    const influence = props.influence_conversation ?? type !== 'any';
    if (typeof influence !== 'boolean') {
      fail(
        [...path, 'influence_conversation'],
        `slot '${name}': influence_conversation must be true or false`,
      );
    }
    if (type === 'any' && influence) {
      fail(
        [...path, 'influence_conversation'],
        `an AnySlot cannot be featurized: set influence_conversation to false for slot '${name}'`,
      );
    }
    const rawMappings = props.mappings ?? [];
    if (!Array.isArray(rawMappings)) {
      fail([...path, 'mappings'], `slot '${name}': mappings must be a list`);
    }
    const mappings = rawMappings.map((m, i) => {
      if (!isJsonObject(m) || typeof m.type !== 'string') {
        fail(
          [...path, 'mappings', i],
          `slot '${name}': each mapping must be a mapping with a 'type'`,
        );
      }
      return m;
    });
    const properties = { ...props };
    delete properties.type;
    const slot: SlotDefinition = {
      name,
      type,
      initialValue: props.initial_value ?? null,
      influenceConversation: influence,
      mappings,
      properties,
    };
    if (type === 'categorical') {
      const values = props.values ?? [];
      if (!Array.isArray(values)) {
        fail([...path, 'values'], `slot '${name}': values must be a list`);
      }
      return { ...slot, values };
    }
    if (type === 'float') {
      const min = props.min_value ?? 0.0;
      const max = props.max_value ?? 1.0;
      if (typeof min !== 'number' || typeof max !== 'number' || min >= max) {
        fail(
          path,
          `float slot '${name}' has an invalid range: min_value (${JSON.stringify(min)}) must be a number ` +
            `smaller than max_value (${JSON.stringify(max)})`,
        );
      }
      return { ...slot, minValue: min, maxValue: max };
    }
    return slot;
  });
}

function collectResponses(value: unknown, fail: Fail): Record<string, JsonObject[]> {
  if (value === undefined || value === null) return {};
  if (!isJsonObject(value)) fail(['responses'], 'responses must be a mapping');
  const out: Record<string, JsonObject[]> = {};
  for (const [name, variations] of Object.entries(value)) {
    if (!Array.isArray(variations)) {
      fail(['responses', name], `response '${name}' must be a list of variations`);
    }
    out[name] = variations.map((v, i) => {
      if (!isJsonObject(v)) {
        fail(['responses', name, i], `each variation of response '${name}' must be a mapping`);
      }
      return v;
    });
  }
  return out;
}

function collectActions(value: unknown, fail: Fail): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(['actions'], 'actions must be a list');
  const names = value.map((entry, i) => {
    if (typeof entry === 'string') return entry;
    if (isJsonObject(entry) && Object.keys(entry).length === 1) {
      return Object.keys(entry)[0] as string;
    }
    return fail(
      ['actions', i],
      'each action must be a name or a mapping of one name to its properties',
    );
  });
  checkUnique(names, 'actions', ['actions'], fail);
  return names;
}

function collectForms(value: unknown, fail: Fail): Record<string, JsonObject> {
  if (value === undefined || value === null) return {};
  if (!isJsonObject(value)) {
    fail(['forms'], 'forms must be a mapping of form names to their definitions');
  }
  const out: Record<string, JsonObject> = {};
  for (const [name, form] of Object.entries(value)) {
    if (form === null) {
      out[name] = { required_slots: [] };
      continue;
    }
    if (Array.isArray(form)) {
      out[name] = { required_slots: form };
      continue;
    }
    if (!isJsonObject(form)) fail(['forms', name], `form '${name}' must be a mapping`);
    if (form.required_slots !== undefined) {
      stringList(form.required_slots, ['forms', name, 'required_slots'], fail);
    }
    out[name] = form.required_slots === undefined ? { required_slots: [], ...form } : form;
  }
  return out;
}

function collectSessionConfig(value: unknown, fail: Fail): SessionConfig {
  if (value === undefined || value === null) {
    return {
      sessionExpirationTime: DEFAULT_SESSION_EXPIRATION_TIME_IN_MINUTES,
      carryOverSlots: DEFAULT_CARRY_OVER_SLOTS_TO_NEW_SESSION,
    };
  }
  if (!isJsonObject(value)) fail(['session_config'], 'session_config must be a mapping');
  const time = value.session_expiration_time ?? DEFAULT_SESSION_EXPIRATION_TIME_IN_MINUTES;
  if (typeof time !== 'number' || time < 0) {
    fail(
      ['session_config', 'session_expiration_time'],
      'session_expiration_time must be a number of minutes (>= 0)',
    );
  }
  const carry = value.carry_over_slots_to_new_session ?? DEFAULT_CARRY_OVER_SLOTS_TO_NEW_SESSION;
  if (typeof carry !== 'boolean') {
    fail(
      ['session_config', 'carry_over_slots_to_new_session'],
      'carry_over_slots_to_new_session must be true or false',
    );
  }
  return { sessionExpirationTime: time, carryOverSlots: carry };
}
