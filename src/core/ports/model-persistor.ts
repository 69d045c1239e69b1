/**
 * Port: a store of model archives outside this machine (an S3 bucket, a custom persistor).
 * Method names follow Rasa's `Persistor`: `retrieveTar` ↔ `_retrieve_tar`, `persistTar` ↔
 * `_persist_tar`, `retrieveTarSize` ↔ `_retrieve_tar_size`. A custom persistor is a class with
 * these three methods, exported by a JS module at the assistant project root.
 */
export abstract class ModelPersistor {
  /**
   * Downloads the object `filename` (the key in the store) into the directory `targetPath`
   * (default: the working directory) as a file named after the key's last segment.
   */
  abstract retrieveTar(filename: string, targetPath?: string): Promise<void>;

  /** Uploads the local archive `tarName` under the key `fileKey`. */
  abstract persistTar(fileKey: string, tarName: string): Promise<void>;

  /** Size in bytes of the stored object `filename`, checked before it is downloaded. */
  abstract retrieveTarSize(filename: string, targetPath?: string): Promise<number>;
}

/** The key of a model in remote storage (Rasa's rules). */
export function remoteModelKey(name: string, remoteStoragePath: string | null): string {
  const withSuffix = name.endsWith('.tar.gz') ? name : `${name}.tar.gz`;
  if (remoteStoragePath === null || remoteStoragePath === '') return withSuffix;
  const base = withSuffix.split('/').pop() ?? withSuffix;
  return `${remoteStoragePath.replace(/\/+$/, '')}/${base}`;
}
