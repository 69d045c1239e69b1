import { Domain } from 'src/core/domain/domain';
import { FlowsList } from 'src/core/flows/flows-list';
import { readFlowsYaml } from 'src/core/flows/flows-reader';
import { type LoadedAssistant } from './assistant-source';
import { parseForModelRoute } from './model-parse';

const domain = Domain.fromYaml(`
intents: [book]
slots:
  bike_type:
    type: text
    mappings: [{ type: from_entity, entity: bike_type }]
responses:
  utter_ask_bike_type: [{ text: "Which bike?" }]
`);

function assistant(withFlows: boolean): LoadedAssistant {
  const base = { domain, modelId: 'm', modelFile: null, assistantId: null };
  if (!withFlows) return base;
  const flows = new FlowsList(
    readFlowsYaml(
      'flows:\n  book:\n    description: Book.\n    nlu_trigger: [{ intent: book }]\n    steps:\n      - collect: bike_type\n',
      'flows.yml',
    ),
  );
  return { ...base, calm: { flows, generators: [] } };
}

describe('parseForModelRoute (POST /model/parse)', () => {
  it('adds commands: [] for a CALM assistant without running a command generator', () => {
    const parsed = parseForModelRoute(assistant(true), '/book');
    expect(parsed).toMatchObject({ text: '/book', intent: { name: 'book' }, commands: [] });
    expect(Object.keys(parsed).slice(0, 4)).toEqual(['text', 'intent', 'entities', 'commands']);
    expect(parsed).not.toHaveProperty('flows_in_prompt');
  });

  it('answers the set slot commands of a /SetSlots payload, with no intent', () => {
    expect(parseForModelRoute(assistant(true), '/SetSlots(bike_type=city)')).toEqual({
      text: '/SetSlots(bike_type=city)',
      intent: { name: null, confidence: 0 },
      entities: [],
      commands: [
        {
          command: 'set slot',
          name: 'bike_type',
          value: 'city',
          extractor: 'CommandPayloadReader',
        },
      ],
    });
  });

  it('leaves the answer of an assistant without flows as it was', () => {
    expect(parseForModelRoute(assistant(false), '/book')).not.toHaveProperty('commands');
  });
});
