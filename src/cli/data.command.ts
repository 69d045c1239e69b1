import { Domain, readDomainPath } from 'src/core';
import { validateFlowsData } from 'src/core/validation/flows-data-validator';
import { validateProject, type ValidationIssue } from 'src/core/validation/project-validator';
import { readTrainingData } from './train.command';

/** Options of `parley data validate` (Rasa's `rasa data validate`). */
export interface DataValidateOptions {
  data?: string[];
  domain?: string;
  maxHistory?: number;
  failOnWarnings?: boolean;
}

export interface DataValidateResult {
  readonly issues: readonly ValidationIssue[];
  /** Whether the project passes: no errors, and no warnings with `--fail-on-warnings`. */
  readonly ok: boolean;
}

/** Which checks run: everything, only the story structure, or only the flows. */
export type ValidateWhat = 'all' | 'stories' | 'flows';

/**
 * `parley data validate [stories|flows]`: reads the domain and the data (defaults `domain.yml`,
 * `data/`) and runs Rasa's validator checks; `stories` runs only the story-structure check,
 * `flows` only the flows checks (which plain `validate` runs too when the data has flows).
 * Each finding is logged on its own line (`error:` / `warning:`).
 */
export async function validateData(
  opts: DataValidateOptions,
  what: ValidateWhat = 'all',
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<DataValidateResult> {
  const domainFile = opts.domain ?? 'domain.yml';
  // A directory's YAML domain files are merged, as for training.
  const domainText = (await readDomainPath(domainFile)).text;
  const domain = Domain.fromYaml(domainText, domainFile);
  const { data, stories, flows } = await readTrainingData(
    opts.data && opts.data.length ? opts.data : ['data'],
    log,
  );
  const flowsCheck =
    what === 'flows' || (what === 'all' && flows.length > 0)
      ? validateFlowsData(flows, domainText)
      : null;
  const issues =
    what === 'flows'
      ? []
      : validateProject(
          { domain, nlu: data, blocks: stories, flows: flowsCheck?.flows ?? null },
          { maxHistory: opts.maxHistory ?? null, storiesOnly: what === 'stories' },
        );
  issues.push(...(flowsCheck?.issues ?? []));
  for (const issue of issues) log(`${issue.severity}: ${issue.message}`);
  const errors = issues.filter((i) => i.severity === 'error').length;
  const warnings = issues.length - errors;
  const ok = errors === 0 && (!opts.failOnWarnings || warnings === 0);
  log(
    `${ok ? 'Validation passed' : 'Validation failed'}: ${errors} error${errors === 1 ? '' : 's'}, ` +
      `${warnings} warning${warnings === 1 ? '' : 's'}` +
      (opts.failOnWarnings && warnings > 0 && errors === 0 ? ' (--fail-on-warnings)' : '') +
      '.',
  );
  return { issues, ok };
}
