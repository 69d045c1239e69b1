import { Domain, readDomainPath } from 'src/core';
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

/**
 * `parley data validate [stories]`: reads the domain and the data (defaults `domain.yml`,
 * `data/`) and runs Rasa's validator checks; `stories` runs only the story-structure check.
 * Each finding is logged on its own line (`error:` / `warning:`).
 */
export async function validateData(
  opts: DataValidateOptions,
  storiesOnly: boolean,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<DataValidateResult> {
  const domainFile = opts.domain ?? 'domain.yml';
  // A directory's YAML domain files are merged, as for training.
  const domain = Domain.fromYaml((await readDomainPath(domainFile)).text, domainFile);
  const { data, stories } = await readTrainingData(
    opts.data && opts.data.length ? opts.data : ['data'],
    log,
  );
  const issues = validateProject(
    { domain, nlu: data, blocks: stories },
    { maxHistory: opts.maxHistory ?? null, storiesOnly },
  );
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
