import { Domain } from 'src/core/domain/domain';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { type JsonObject } from 'src/core/events/event-base';
import { type ComponentConfig } from 'src/core/training-data/config-reader';
import { parse, stringify } from 'yaml';
import { type AsyncCommandGenerator, type CalmSetup } from './calm-turn';
import { commandGeneratorsOf } from './command-generators';
import { flowsDomainData, mergeFlowsDomainData, withDefaultPatterns } from './default-patterns';
import { type FlowsList } from './flows-list';
import { readFlowsFiles } from './flows-reader';
import { assertValidFlowsStructure, validateFlows } from './flows-validation';
import {
  isLlmGeneratorName,
  LlmCommandGenerator,
  type LlmGeneratorOptions,
} from './llm/llm-command-generator';
import { DialogueStack } from './stack';

/** Where a model archive keeps its flows. */
export const FLOWS_ARCHIVE_FILE = 'core/flows.json';

/** A flows file as it was read (the archive keeps the sources and reads them again at load). */
export interface FlowsSource {
  readonly path: string;
  readonly text: string;
}

/** What the archive's `core/flows.json` holds. */
export interface StoredFlows {
  readonly sources: readonly FlowsSource[];
  readonly generators: readonly ComponentConfig[];
}

/** The flows of an assistant: the user's, with the default patterns merged in (checked). */
export function buildFlows(sources: readonly FlowsSource[]): FlowsList {
  const flows = withDefaultPatterns(readFlowsFiles(sources));
  assertValidFlowsStructure(flows);
  return flows;
}

/**
 * The domain YAML with what the flows add (pattern responses and slots, `flow_<id>` actions,
 * the built-in CALM actions); the user's domain wins on conflicts.
 */
export function domainTextWithFlows(domainText: string, flows: FlowsList): string {
  const raw: unknown = parse(domainText, { maxAliasCount: 50 }) ?? {};
  const data = (typeof raw === 'object' && !Array.isArray(raw) ? raw : {}) as JsonObject;
  return stringify(mergeFlowsDomainData(data, flowsDomainData(flows)), { lineWidth: 0 });
}

/**
 * Training's flows step: the flows built and checked against the domain (with the flows'
 * additions). Errors stop training (`TRAINING_DATA.INVALID`, every message naming file and
 * flow, as `rasa train` does); warnings are returned.
 */
export function trainFlows(
  sources: readonly FlowsSource[],
  domainText: string,
): { flows: FlowsList; domainText: string; domain: Domain; warnings: string[] } {
  const flows = buildFlows(sources);
  const merged = domainTextWithFlows(domainText, flows);
  const domain = Domain.fromYaml(merged, 'domain.yml');
  const { errors, warnings } = validateFlows(flows, domain);
  if (errors.length > 0) {
    throw new DialogueError(
      'TRAINING_DATA.INVALID',
      `The flows are not valid:\n${errors.map((e) => `- ${e}`).join('\n')}`,
      { errors },
    );
  }
  return { flows, domainText: merged, domain, warnings };
}

/** The archive entry of a trained assistant's flows. */
export function storedFlowsJson(
  sources: readonly FlowsSource[],
  pipeline: readonly ComponentConfig[] | null | undefined,
): string {
  const stored: StoredFlows = { sources, generators: commandGeneratorsOf(pipeline) };
  return JSON.stringify(stored);
}

/**
 * Reads `core/flows.json` back into the flows and the turn's CALM setup; LLM generators are
 * built from their config with the API key from `env` (a missing key or a bad config is an
 * error at load, naming the generator).
 */
export function loadStoredFlows(json: string, options: LlmGeneratorOptions = {}): CalmSetup {
  const stored = JSON.parse(json) as StoredFlows;
  const sources: readonly FlowsSource[] = Array.isArray(stored.sources) ? stored.sources : [];
  const generators: readonly ComponentConfig[] = Array.isArray(stored.generators)
    ? stored.generators
    : [];
  const llm = new Map<number, AsyncCommandGenerator>();
  generators.forEach((config, index) => {
    if (!isLlmGeneratorName(config.name)) return;
    const generator = LlmCommandGenerator.fromConfig(config.name, config, options);
    llm.set(index, {
      predictCommands: (input) =>
        generator.predictCommands({
          text: input.text,
          tracker: input.tracker,
          flows: input.flows,
          stack: new DialogueStack(input.tracker.stack),
          existingCommands: input.existingCommands,
        }),
    });
  });
  return { flows: buildFlows(sources), generators, ...(llm.size > 0 ? { llm } : {}) };
}
