import { Domain } from 'src/core/domain/domain';
import { readStoriesYaml } from 'src/core/training-data/stories-yaml-reader';
import { NO_FLOWS_FOUND, validateFlowsData } from 'src/core/validation/flows-data-validator';
import { validateProject, type ValidationIssue } from 'src/core/validation/project-validator';

const DOMAIN = `
version: "3.1"
intents: [greet, ask_hours]
slots:
  city:
    type: text
    mappings: [{ type: from_text }]
responses:
  utter_greet: [{ text: Hello! }]
  utter_hours: [{ text: We open at nine. }]
  utter_ask_city: [{ text: Which city? }]
`;

const HOURS = `flows:
  opening_hours:
    description: Say when we are open.
    nlu_trigger: [{ intent: ask_hours }]
    steps:
      - collect: city
      - action: utter_hours
`;

const messages = (issues: readonly ValidationIssue[], severity: 'error' | 'warning'): string[] =>
  issues.filter((i) => i.severity === severity).map((i) => i.message);

describe('validateFlowsData', () => {
  it('passes flows the domain can run, and returns them with the default patterns', () => {
    const { issues, flows } = validateFlowsData([{ path: 'data/flows.yml', text: HOURS }], DOMAIN);
    expect(issues).toEqual([]);
    expect(flows?.userFlows.map((f) => f.id)).toEqual(['opening_hours']);
    expect(flows?.flow('pattern_completed')).toBeDefined();
  });

  it('reports a problem in every malformed file, naming file and line', () => {
    const { issues, flows } = validateFlowsData(
      [
        { path: 'data/a.yml', text: 'flows:\n  - not_a_map\n' },
        {
          path: 'data/b.yml',
          text: 'flows:\n  empty:\n    description: Nothing.\n    steps: []\n',
        },
        { path: 'data/flows.yml', text: HOURS },
      ],
      DOMAIN,
    );
    expect(flows).toBeNull();
    const errors = messages(issues, 'error');
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^data\/a\.yml:2: .*expected a dictionary of flows/);
    expect(errors[1]).toMatch(/^data\/b\.yml:\d+: /);
  });

  it('reports flow ids used in two files, and every rule across flows that is broken', () => {
    const dup = validateFlowsData(
      [
        { path: 'data/a.yml', text: HOURS },
        { path: 'data/b.yml', text: HOURS },
      ],
      DOMAIN,
    );
    expect(messages(dup.issues, 'error')).toEqual([
      "Flow 'opening_hours' is used in both `data/a.yml` and `data/b.yml`. Please make sure flow IDs are unique across all files.",
    ]);

    const links = `flows:
  one:
    description: First.
    steps: [{ link: nowhere }]
  two:
    description: Second.
    steps: [{ link: pattern_completed }]
`;
    const crossed = validateFlowsData([{ path: 'data/links.yml', text: links }], DOMAIN);
    const errors = messages(crossed.issues, 'error');
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^data\/links\.yml: Flow 'nowhere' is linked from flow 'one'/);
    expect(errors[1]).toMatch(
      /^data\/links\.yml: Step '.*' in flow 'two' is referencing a pattern/,
    );
  });

  it("runs the validator's domain checks on the domain with the flows' additions", () => {
    const text = `flows:
  greet_user:
    description: Greet.
    steps:
      - action: utter_greet
      - collect: country
      - action: utter_can_do_something_else
`;
    const { issues } = validateFlowsData([{ path: 'data/flows.yml', text }], DOMAIN);
    // utter_can_do_something_else comes with the default patterns; country is unknown.
    expect(messages(issues, 'error')).toEqual([
      "data/flows.yml: The slot 'country' is collected in step 'greet_user_1_collect_country' of flow 'greet_user', but it is not listed in the domain slots. You should add it to your domain file!",
    ]);
  });

  it('warns when there are no flows', () => {
    expect(validateFlowsData([], DOMAIN).issues).toEqual([
      { severity: 'warning', message: NO_FLOWS_FOUND },
    ]);
    expect(validateFlowsData([{ path: 'x.yml', text: 'flows:\n' }], DOMAIN).issues).toEqual([
      { severity: 'warning', message: NO_FLOWS_FOUND },
    ]);
  });
});

describe('validateProject with flows', () => {
  const rules = readStoriesYaml(
    `rules:
  - rule: greet
    steps: [{ intent: greet }, { action: utter_greet }]
`,
    'data/rules.yml',
  ).blocks;
  const domain = Domain.fromYaml(DOMAIN, 'domain.yml');

  it("counts the flows' trigger intents and the responses they run as used", () => {
    const without = messages(validateProject({ domain, nlu: null, blocks: rules }), 'warning');
    expect(without).toContain("The intent 'ask_hours' is not used in any story or rule.");
    expect(without).toContain("The utterance 'utter_hours' is not used in any story or rule.");

    const { flows } = validateFlowsData([{ path: 'data/flows.yml', text: HOURS }], DOMAIN);
    const withFlows = messages(
      validateProject({ domain, nlu: null, blocks: rules, flows }),
      'warning',
    );
    expect(withFlows.join('\n')).not.toContain('ask_hours');
    expect(withFlows.join('\n')).not.toContain('utter_hours');
  });
});
