import { Domain } from 'src/core/domain/domain';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { withDefaultPatterns } from 'src/core/flows/default-patterns';
import { type Flow } from 'src/core/flows/flow';
import { type FlowsList } from 'src/core/flows/flows-list';
import { domainTextWithFlows, type FlowsSource } from 'src/core/flows/flows-model';
import { readFlowsYaml } from 'src/core/flows/flows-reader';
import {
  flowSource,
  flowsListStructureErrors,
  validateFlows,
} from 'src/core/flows/flows-validation';
import { type ValidationIssue } from './project-validator';

/** Rasa's warning when `data validate flows` finds no flows. */
export const NO_FLOWS_FOUND =
  'No flows were found in the data files. Will not proceed with flow validation.';

export interface FlowsDataCheck {
  readonly issues: ValidationIssue[];
  /** The flows with the default patterns merged in; null when they could not be read. */
  readonly flows: FlowsList | null;
}

const error = (message: string): ValidationIssue => ({ severity: 'error', message });
const warning = (message: string): ValidationIssue => ({ severity: 'warning', message });

/**
 * `rasa data validate flows`: the flows files read and checked as training checks them, but
 * every problem reported instead of the first. First each file's schema and each flow's
 * structure (one error per file, naming file and line), then ids unique across files and the
 * rules across flows (trigger intents, call and link targets, patterns), then Rasa's validator
 * checks against the domain with what the flows add to it (pattern responses and slots, flow
 * actions): collected and set slots exist, each collect has a way to ask, actions exist,
 * predicates parse, names and descriptions are unique.
 */
export function validateFlowsData(
  sources: readonly FlowsSource[],
  domainText: string,
): FlowsDataCheck {
  const read: Flow[] = [];
  const issues: ValidationIssue[] = [];
  const fileOf = new Map<string, string>();
  for (const source of sources) {
    let flows: Flow[];
    try {
      flows = readFlowsYaml(source.text, source.path);
    } catch (e) {
      if (!(e instanceof DialogueError)) throw e;
      issues.push(error(e.message));
      continue;
    }
    for (const flow of flows) {
      const first = fileOf.get(flow.id);
      if (first !== undefined) {
        issues.push(
          error(
            `Flow '${flow.id}' is used in both \`${first}\` and \`${source.path}\`. ` +
              'Please make sure flow IDs are unique across all files.',
          ),
        );
        continue;
      }
      fileOf.set(flow.id, source.path);
      read.push(flow);
    }
  }
  if (issues.length > 0) return { issues, flows: null };
  if (read.length === 0) return { issues: [warning(NO_FLOWS_FOUND)], flows: null };

  const flows = withDefaultPatterns(read);
  for (const problem of flowsListStructureErrors(flows)) {
    const flow = flows.flows.find((f) => problem.includes(`'${f.id}'`));
    issues.push(error(`${flow ? flowSource(flow) : 'flows'}: ${problem}`));
  }
  if (issues.length > 0) return { issues, flows: null };

  const domain = Domain.fromYaml(domainTextWithFlows(domainText, flows), 'domain.yml');
  const result = validateFlows(flows, domain);
  return {
    issues: [...result.errors.map(error), ...result.warnings.map(warning)],
    flows,
  };
}
