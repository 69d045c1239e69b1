import { basename } from 'node:path';
import { DialogueError, Domain, type LoadedAssistant } from 'src/core';
import { FLOWS_ARCHIVE_FILE, loadStoredFlows } from 'src/core/flows/flows-model';
import {
  checkLocalModelPath,
  readModelArchive,
  scanModelDirectory,
  type ArchiveLimits,
  type CheckedModelPath,
  type ParleyCompatibility,
} from 'src/core/model-archive';
import { loadNlu } from 'src/core/nlu';
import { PolicyEnsemble } from 'src/core/policies/policy-ensemble';
import { MINIMUM_COMPATIBLE_VERSION, PARLEY_VERSION } from 'src/platform/config/version';

export const COMPATIBILITY: ParleyCompatibility = {
  parleyVersion: PARLEY_VERSION,
  minimumCompatibleVersion: MINIMUM_COMPATIBLE_VERSION,
};

/**
 * Reads a model archive into a LoadedAssistant: the domain, the model's identity and its
 * trained NLU (when the archive has `nlu/model.json`).
 */
export async function loadModelArchive(
  path: string,
  limits: ArchiveLimits = {},
): Promise<LoadedAssistant> {
  const { manifest, files } = await readModelArchive(path, { ...limits, ...COMPATIBILITY });
  const domainYaml = files.get('domain.yml');
  if (domainYaml === undefined) {
    throw new DialogueError('MODEL.INVALID_ARCHIVE', `${path}: the archive has no domain.yml`, {
      reason: 'missing_domain',
    });
  }
  let domain = Domain.fromYaml(domainYaml.toString('utf8'), 'domain.yml');
  const nluJson = files.get('nlu/model.json');
  const nlu = nluJson === undefined ? undefined : loadNlu(JSON.parse(nluJson.toString('utf8')));
  const phrasesJson = files.get('nlu/phrases.json');
  const phrases = phrasesJson === undefined ? undefined : readPhrases(phrasesJson.toString('utf8'));
  const flowsJson = files.get(FLOWS_ARCHIVE_FILE);
  const calm = flowsJson === undefined ? undefined : loadStoredFlows(flowsJson.toString('utf8'));
  const coreJson = files.get('core/policies.json');
  let policies: PolicyEnsemble | undefined;
  if (coreJson !== undefined) {
    const core = JSON.parse(coreJson.toString('utf8')) as Record<string, unknown>;
    policies = PolicyEnsemble.fromJSON(core, calm?.flows);
    // Retrieval responses of the NLU data belong to the domain (Rasa merges them at training).
    domain = domain.withResponses((core.responses ?? {}) as never);
  }
  return {
    domain,
    ...(policies === undefined ? {} : { policies }),
    modelId: manifest.model_id,
    modelFile: basename(path),
    assistantId: manifest.assistant_id,
    ...(nlu === undefined ? {} : { nlu }),
    ...(phrases === undefined ? {} : { phrases }),
    ...(calm === undefined ? {} : { calm }),
  };
}

/** `nlu/phrases.json`: a list of strings; anything else is ignored (the phrases are a hint). */
function readPhrases(json: string): string[] | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Resolves `--model` (an archive, or a directory whose newest archive is taken) to an archive
 * path; null when there is none. Anything but a regular file or a directory (a FIFO, a device,
 * a `/proc` entry) is refused before it is opened; a symbolic link is followed and its target
 * checked the same way.
 */
export async function resolveModelPath(
  path: string,
  limits: ArchiveLimits = {},
): Promise<string | null> {
  let checked: CheckedModelPath;
  try {
    checked = await checkLocalModelPath(path);
  } catch (e) {
    if (e instanceof DialogueError && e.details['reason'] === 'not_found') return null;
    throw e;
  }
  if (checked.kind === 'file') return path;
  const scan = await scanModelDirectory(path, { ...limits, compatibility: COMPATIBILITY });
  return scan.latest?.path ?? null;
}
