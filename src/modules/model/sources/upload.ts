import { resolve } from 'node:path';
import { remoteStorageSettings } from 'src/platform/config/remote-storage-settings';
import { REMOTE_STORAGE_PATH_DEPRECATED, persistKey } from './model-store.service';
import { createPersistor } from './persistors/create-persistor';

/**
 * `parley train --remote-storage <kind> [--out <path in bucket>]`: uploads the archive to
 * `<out | REMOTE_STORAGE_PATH | models>/<archive name>`, settings from the environment.
 */
export async function uploadTrainedModel(
  kind: string,
  archivePath: string,
  out: string | null,
  log: (line: string) => void,
  env: Record<string, string | undefined> = process.env,
): Promise<string> {
  const settings = remoteStorageSettings(env);
  if (settings.path !== null && out === null) log(`warning: ${REMOTE_STORAGE_PATH_DEPRECATED}`);
  const persistor = createPersistor(kind, settings, resolve(env.PARLEY_PROJECT_DIR ?? '.'));
  const key = persistKey(archivePath, out, settings.path);
  await persistor.persistTar(key, archivePath);
  log(`Model uploaded to remote storage '${kind}' as ${key}`);
  return key;
}
