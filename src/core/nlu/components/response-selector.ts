import { ParamReader, type NluComponent, type TrainContext } from 'src/core/nlu/component';
import { rank, readSoftmaxConfig } from 'src/core/nlu/components/diet-classifier';
import { layoutOf, sentenceInput, type FeatureLayout } from 'src/core/nlu/feature-assembly';
import { type NluMessage, type ResponseSelectorPrediction } from 'src/core/nlu/message';
import { SoftmaxModel } from 'src/core/nlu/softmax-model';
import { stateRecord, stateStrings } from 'src/core/nlu/sparse';
import {
  baseIntent,
  isRetrievalIntent,
  type ResponseVariation,
} from 'src/core/training-data/nlu-training-data';

/** Stable 31-bit id of a response key (Rasa uses a hash of the label). */
export function responseId(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h & 0x7fffffff;
}

/**
 * Rasa ResponseSelector: picks the `intent_response_key` (`faq/ask_x`) of a retrieval intent with a
 * sparse softmax model over the sentence features. One selector serves all retrieval intents
 * (`retrieval_intent: null`, key `default`) or only the configured one.
 */
export class ResponseSelector implements NluComponent {
  static readonly componentName = 'ResponseSelector';
  readonly name = ResponseSelector.componentName;

  private constructor(
    private readonly retrievalIntent: string | null,
    private readonly allRetrievalIntents: readonly string[],
    private readonly layout: FeatureLayout,
    private readonly labels: readonly string[],
    private readonly model: SoftmaxModel | null,
    private readonly responses: Readonly<Record<string, readonly ResponseVariation[]>>,
    private readonly rankingLength: number,
  ) {}

  static async train(
    params: Readonly<Record<string, unknown>>,
    ctx: TrainContext,
  ): Promise<ResponseSelector> {
    const config = readSoftmaxConfig(
      ResponseSelector.componentName,
      params,
      0,
      ctx.messages.length,
    );
    const retrievalIntent = new ParamReader(ResponseSelector.componentName, params).optionalString(
      'retrieval_intent',
    );
    const retrieval = ctx.messages.filter((m) => isRetrievalIntent(m.example.intent));
    const all = [...new Set(retrieval.map((m) => baseIntent(m.example.intent)))].sort();
    const used = retrieval.filter(
      (m) => retrievalIntent === null || baseIntent(m.example.intent) === retrievalIntent,
    );
    const labels = [...new Set(used.map((m) => m.example.intent))].sort();
    const first = used[0] ?? ctx.messages[0];
    const layout = first ? layoutOf(first) : [];
    const responses: Record<string, readonly ResponseVariation[]> = {};
    for (const key of labels) {
      const variations = ctx.responses[`utter_${key}`];
      if (variations) responses[key] = variations;
      else {
        ctx.warnings.push(
          `ResponseSelector: no response 'utter_${key}' for retrieval intent '${key}'`,
        );
      }
    }
    if (labels.length === 0) {
      ctx.warnings.push(
        'ResponseSelector: no retrieval intents (intent/response_key examples) to train on',
      );
      return new ResponseSelector(
        retrievalIntent,
        all,
        layout,
        [],
        null,
        responses,
        config.ranking_length,
      );
    }
    const index = new Map(labels.map((l, i) => [l, i]));
    const model = await SoftmaxModel.train(
      used.map((m) => sentenceInput(m, layout)),
      used.map((m) => index.get(m.example.intent) ?? 0),
      {
        inputDim: layout.reduce((a, b) => a + b, 0),
        classes: labels.length,
        hidden: config.hidden,
        epochs: config.epochs,
        learningRate: config.learning_rate,
        l2: config.regularization_constant,
        dropRate: config.drop_rate,
        batchSizes: config.batch_size,
        seed: config.random_seed + ctx.index,
        tolerance: config.tolerance,
        patience: config.patience,
        onEpoch: async (epoch) => {
          ctx.progress((epoch + 1) / config.epochs);
          if (epoch % 10 === 9) await ctx.yieldNow();
        },
      },
    );
    return new ResponseSelector(
      retrievalIntent,
      all,
      layout,
      labels,
      model,
      responses,
      config.ranking_length,
    );
  }

  static load(_config: Readonly<Record<string, unknown>>, state: unknown): ResponseSelector {
    const s = stateRecord(state, 'ResponseSelector');
    const responses = stateRecord(s['responses'] ?? {}, 'ResponseSelector.responses') as Record<
      string,
      readonly ResponseVariation[]
    >;
    return new ResponseSelector(
      typeof s['retrievalIntent'] === 'string' ? s['retrievalIntent'] : null,
      stateStrings(s['allRetrievalIntents'] ?? [], 'ResponseSelector.allRetrievalIntents'),
      Array.isArray(s['layout']) ? (s['layout'] as number[]) : [],
      stateStrings(s['labels'] ?? [], 'ResponseSelector.labels'),
      s['model'] ? SoftmaxModel.fromJSON(s['model'], 'ResponseSelector.model') : null,
      responses,
      typeof s['rankingLength'] === 'number' ? s['rankingLength'] : 10,
    );
  }

  process(message: NluMessage): void {
    const key = this.retrievalIntent ?? 'default';
    const output = message.responseSelector ?? {
      all_retrieval_intents: [...this.allRetrievalIntents],
    };
    let prediction: ResponseSelectorPrediction = {
      response: {
        id: null,
        responses: null,
        response_templates: null,
        confidence: 0,
        intent_response_key: null,
        utter_action: null,
        template_name: null,
      },
      ranking: [],
    };
    if (this.model) {
      const probs = this.model.predict(sentenceInput(message, this.layout));
      const ranking = rank(this.labels, probs, this.rankingLength);
      const top = ranking[0];
      if (top?.name) {
        const variations = [...(this.responses[top.name] ?? [])];
        prediction = {
          response: {
            id: responseId(top.name),
            responses: variations,
            response_templates: variations,
            confidence: top.confidence,
            intent_response_key: top.name,
            utter_action: `utter_${top.name}`,
            template_name: `utter_${top.name}`,
          },
          ranking: ranking.map((r) => ({
            id: responseId(r.name ?? ''),
            confidence: r.confidence,
            intent_response_key: r.name ?? '',
          })),
        };
      }
    }
    output[key] = prediction;
    message.responseSelector = output;
  }

  toJSON(): unknown {
    return {
      retrievalIntent: this.retrievalIntent,
      allRetrievalIntents: this.allRetrievalIntents,
      layout: this.layout,
      labels: this.labels,
      model: this.model?.toJSON() ?? null,
      responses: this.responses,
      rankingLength: this.rankingLength,
    };
  }
}
