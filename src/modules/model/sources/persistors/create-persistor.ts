import { DialogueError, type ModelPersistor } from 'src/core';
import { type RemoteStorageSettings } from 'src/platform/config/remote-storage-settings';
import { loadCustomPersistor } from './custom.persistor';
import { S3Persistor } from './s3.persistor';

function unavailable(kind: string, missing: string[], hint: string): DialogueError {
  return new DialogueError(
    'MODEL.REMOTE_STORAGE_UNAVAILABLE',
    `Remote storage '${kind}' is not available in this build of Parley (it needs ${missing.join(', ')} and a client that is not built in). ${hint}`,
    { parameter: 'remote_storage', in: 'body', missing },
  );
}

/**
 * The persistor for a `--remote-storage` / `remote_storage` kind: `aws` (S3 API), `gcs` and
 * `azure` (not built in: a clear error naming the configuration), or `<module>.<class>`.
 */
export function createPersistor(
  kind: string,
  settings: RemoteStorageSettings,
  projectDir: string,
): ModelPersistor {
  switch (kind) {
    case 'aws':
      return new S3Persistor(settings);
    case 'gcs':
      return rejectGcs(settings);
    case 'azure':
      return rejectAzure(settings);
    default:
      if (/^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*\.[A-Za-z_]\w*$/.test(kind)) {
        return loadCustomPersistor(kind, projectDir, settings.bucket);
      }
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        `'remote_storage' must be aws, gcs, azure or <module>.<class>, got ${JSON.stringify(kind)}.`,
        { parameter: 'remote_storage', in: 'body' },
      );
  }
}

function rejectGcs(settings: RemoteStorageSettings): never {
  const missing = [
    ...(settings.bucket === null ? ['BUCKET_NAME'] : []),
    'GOOGLE_APPLICATION_CREDENTIALS',
  ];
  throw unavailable(
    'gcs',
    missing,
    "Google Cloud Storage speaks the S3 API: use 'aws' with AWS_ENDPOINT_URL=https://storage.googleapis.com and HMAC keys as AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or a custom <module>.<class> persistor.",
  );
}

function rejectAzure(settings: RemoteStorageSettings): never {
  const { container, accountName, accountKey } = settings.azure;
  const missing = [
    ...(container === null ? ['AZURE_CONTAINER'] : []),
    ...(accountName === null ? ['AZURE_ACCOUNT_NAME'] : []),
    ...(accountKey === null ? ['AZURE_ACCOUNT_KEY'] : []),
  ];
  throw unavailable(
    'azure',
    missing.length > 0 ? missing : ['AZURE_CONTAINER', 'AZURE_ACCOUNT_NAME', 'AZURE_ACCOUNT_KEY'],
    'Use a custom <module>.<class> persistor for Azure Blob Storage.',
  );
}
