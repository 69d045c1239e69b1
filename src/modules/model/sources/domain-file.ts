import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { Domain, readDomainPath, type LoadedAssistant } from 'src/core';

/**
 * `--domain` (a file, or a directory whose YAML files are merged into one domain, as Rasa
 * does): a domain served without a trained model, its id the hash of the domain text.
 */
export async function readDomainFile(file: string): Promise<LoadedAssistant> {
  const { text } = await readDomainPath(file);
  const domain = Domain.fromYaml(text, basename(file));
  const modelId = createHash('sha256').update(text).digest('hex').slice(0, 32);
  return { domain, modelId, modelFile: null, assistantId: null };
}
