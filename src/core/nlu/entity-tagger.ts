import { DialogueError } from 'src/core/errors/dialogue-error';
import {
  bilouConstraints,
  NO_ENTITY_TAG,
  spansFromTags,
  tagSet,
  tagsFromEntities,
  type TagAttribute,
} from 'src/core/nlu/bilou';
import { LinearChainCrf, type CrfSequence } from 'src/core/nlu/crf';
import {
  type NluMessage,
  type ParsedEntity,
  type SparseVector,
  type TrainingMessage,
} from 'src/core/nlu/message';
import { stateRecord, stateStrings } from 'src/core/nlu/sparse';

export interface EntityTaggerOptions {
  readonly bilou: boolean;
  /** true, false, or per-entity map (Rasa's split_entities_by_comma). */
  readonly splitByComma: boolean | Readonly<Record<string, boolean>>;
  readonly epochs: number;
  readonly l2: number;
  readonly learningRate: number;
  readonly seed: number;
  readonly onEpoch?: (fraction: number) => void | Promise<void>;
}

interface AttributeModel {
  readonly attribute: TagAttribute;
  readonly tags: string[];
  readonly crf: LinearChainCrf;
}

function withTagFeature(
  rows: readonly SparseVector[],
  base: number,
  tagIds: readonly number[],
): SparseVector[] {
  return rows.map((r, i) => ({
    idx: [...r.idx, base + (tagIds[i] ?? 0)],
    val: [...r.val, 1],
  }));
}

/**
 * BILOU entity tagging with a linear-chain CRF, plus separate role and group CRFs that see the
 * entity tag as an extra feature (gold while training, predicted at parse time).
 */
export class EntityTagger {
  private constructor(
    private readonly numFeatures: number,
    private readonly entity: AttributeModel,
    private readonly extra: AttributeModel[],
    private readonly bilou: boolean,
    private readonly splitByComma: boolean | Readonly<Record<string, boolean>>,
  ) {
    // Decoding only ever yields well-formed BILOU sequences.
    for (const m of [entity, ...extra]) m.crf.constraints = bilouConstraints(m.tags, bilou);
  }

  static hasEntities(messages: readonly TrainingMessage[]): boolean {
    return messages.some((m) => m.example.entities.length > 0);
  }

  static async train(
    messages: readonly TrainingMessage[],
    features: readonly SparseVector[][],
    numFeatures: number,
    o: EntityTaggerOptions,
  ): Promise<EntityTagger> {
    const attrs: TagAttribute[] = ['entity'];
    if (messages.some((m) => m.example.entities.some((e) => e.role))) attrs.push('role');
    if (messages.some((m) => m.example.entities.some((e) => e.group))) attrs.push('group');
    const models: AttributeModel[] = [];
    let entityTagIds: number[][] = [];
    let entityTagCount = 0;
    for (let a = 0; a < attrs.length; a++) {
      const attribute = attrs[a] ?? 'entity';
      const labels = [
        ...new Set(
          messages.flatMap((m) =>
            m.example.entities.map((e) =>
              attribute === 'entity' ? e.entity : attribute === 'role' ? e.role : e.group,
            ),
          ),
        ),
      ]
        .filter((l): l is string => typeof l === 'string' && l.length > 0)
        .sort();
      const tags = tagSet(labels, o.bilou);
      const tagIndex = new Map(tags.map((t, i) => [t, i]));
      const goldIds = messages.map((m) =>
        tagsFromEntities(m.tokens, m.example.entities, attribute, o.bilou).map(
          (t) => tagIndex.get(t) ?? 0,
        ),
      );
      const isEntity = attribute === 'entity';
      const dim = isEntity ? numFeatures : numFeatures + entityTagCount;
      const data: CrfSequence[] = messages.map((_, i) => ({
        features: isEntity
          ? (features[i] ?? [])
          : withTagFeature(features[i] ?? [], numFeatures, entityTagIds[i] ?? []),
        tags: goldIds[i] ?? [],
      }));
      const crf = new LinearChainCrf(dim, tags.length);
      const epochs = o.epochs;
      await crf.fit(data, {
        epochs,
        l2: o.l2,
        learningRate: o.learningRate,
        seed: o.seed + a,
        onEpoch: o.onEpoch ? (e) => o.onEpoch?.((a + (e + 1) / epochs) / attrs.length) : undefined,
      });
      models.push({ attribute, tags, crf });
      if (isEntity) {
        entityTagIds = goldIds;
        entityTagCount = tags.length;
      }
    }
    const [entity, ...extra] = models;
    if (!entity) throw new DialogueError('NLU.INVALID_PIPELINE', 'entity tagger: no entity model');
    return new EntityTagger(numFeatures, entity, extra, o.bilou, o.splitByComma);
  }

  /** Role/group models need the full token features (the entity tag is one of them). */
  get hasExtraModels(): boolean {
    return this.extra.length > 0;
  }

  /** Number of entity tags (width of a row emission). */
  get entityTagCount(): number {
    return this.entity.tags.length;
  }

  /** Entity-tag emission scores of one token row (for callers that cache per-token parts). */
  rowEmission(idx: readonly number[], val: readonly number[]): Float64Array {
    return this.entity.crf.rowEmission(idx, val);
  }

  /**
   * Entities of one message (offsets into message.text). `baseEmissions` (tokens × entity tags)
   * holds precomputed emission scores of feature parts left out of `features`; only allowed
   * without role/group models.
   */
  extract(
    message: NluMessage,
    features: readonly SparseVector[],
    extractor: string,
    baseEmissions: Float64Array | null = null,
  ): ParsedEntity[] {
    if (message.tokens.length === 0) return [];
    if (baseEmissions && this.extra.length > 0) {
      throw new DialogueError('NLU.INVALID_PIPELINE', 'entity tagger: partial features with roles');
    }
    const decoded = this.entity.crf.decode(features, true, baseEmissions);
    const tags = decoded.tags.map((k) => this.entity.tags[k] ?? NO_ENTITY_TAG);
    const split = (label: string): boolean =>
      typeof this.splitByComma === 'boolean'
        ? this.splitByComma
        : (this.splitByComma[label] ?? true);
    const spans = spansFromTags(message.tokens, tags, decoded.confidences, message.text, split);
    if (spans.length === 0) return [];
    const extras = this.extra.map((m) => {
      const d = m.crf.decode(withTagFeature(features, this.numFeatures, decoded.tags));
      return {
        attribute: m.attribute,
        tags: d.tags.map((k) => m.tags[k] ?? NO_ENTITY_TAG),
        conf: d.confidences,
      };
    });
    return spans.map((s) => {
      const e: ParsedEntity = {
        entity: s.label,
        start: s.start,
        end: s.end,
        value: message.text.slice(s.start, s.end),
        confidence_entity: s.confidence,
        extractor,
      };
      for (const x of extras) {
        let best: { label: string; conf: number } | null = null;
        for (let t = s.firstToken; t <= s.lastToken; t++) {
          const tag = x.tags[t] ?? NO_ENTITY_TAG;
          if (tag === NO_ENTITY_TAG) continue;
          const label = tag.length > 2 && tag[1] === '-' ? tag.slice(2) : tag;
          const conf = x.conf[t] ?? 0;
          if (!best || conf > best.conf) best = { label, conf };
        }
        if (!best) continue;
        if (x.attribute === 'role') {
          e.role = best.label;
          e.confidence_role = best.conf;
        } else {
          e.group = best.label;
          e.confidence_group = best.conf;
        }
      }
      return e;
    });
  }

  toJSON(): Record<string, unknown> {
    const ser = (m: AttributeModel): Record<string, unknown> => ({
      attribute: m.attribute,
      tags: m.tags,
      crf: m.crf.toJSON(),
    });
    return {
      numFeatures: this.numFeatures,
      bilou: this.bilou,
      splitByComma: this.splitByComma,
      models: [ser(this.entity), ...this.extra.map(ser)],
    };
  }

  static fromJSON(state: unknown, what: string): EntityTagger {
    const s = stateRecord(state, what);
    const models = (Array.isArray(s['models']) ? (s['models'] as unknown[]) : []).map(
      (raw, i): AttributeModel => {
        const m = stateRecord(raw, `${what}.models[${i}]`);
        const attribute = m['attribute'];
        return {
          attribute: attribute === 'role' || attribute === 'group' ? attribute : 'entity',
          tags: stateStrings(m['tags'], `${what}.tags`),
          crf: LinearChainCrf.fromJSON(m['crf'], `${what}.crf`),
        };
      },
    );
    const [entity, ...extra] = models;
    if (!entity) throw new DialogueError('NLU.INVALID_MODEL', `${what}: no entity model`);
    const split = s['splitByComma'];
    return new EntityTagger(
      typeof s['numFeatures'] === 'number' ? s['numFeatures'] : 0,
      entity,
      extra,
      s['bilou'] !== false,
      typeof split === 'boolean' ? split : ((split ?? true) as Record<string, boolean>),
    );
  }
}
