/**
 * Settings of remote model storage, read from the usual environment variables (secrets only
 * from env/.env). Shared by `parley run` (through validateEnv) and `parley train`.
 */
export interface RemoteStorageSettings {
  /** `BUCKET_NAME`. */
  readonly bucket: string | null;
  /** `AWS_ENDPOINT_URL`: an S3-compatible endpoint (MinIO, ...); null → AWS S3 of the region. */
  readonly endpointUrl: string | null;
  /** `AWS_DEFAULT_REGION` (or `AWS_REGION`). */
  readonly region: string | null;
  readonly accessKeyId: string | null;
  readonly secretAccessKey: string | null;
  readonly sessionToken: string | null;
  /** `REMOTE_STORAGE_PATH`: deprecated sub-folder in the bucket. */
  readonly path: string | null;
  /** `AZURE_CONTAINER`, `AZURE_ACCOUNT_NAME`, `AZURE_ACCOUNT_KEY` (only to say what is missing). */
  readonly azure: {
    readonly container: string | null;
    readonly accountName: string | null;
    readonly accountKey: string | null;
  };
}

export function remoteStorageSettings(
  env: Record<string, string | undefined>,
): RemoteStorageSettings {
  const get = (key: string): string | null => {
    const value = env[key];
    return value === undefined || value.trim() === '' ? null : value.trim();
  };
  return {
    bucket: get('BUCKET_NAME'),
    endpointUrl: get('AWS_ENDPOINT_URL'),
    region: get('AWS_DEFAULT_REGION') ?? get('AWS_REGION'),
    accessKeyId: get('AWS_ACCESS_KEY_ID'),
    secretAccessKey: get('AWS_SECRET_ACCESS_KEY'),
    sessionToken: get('AWS_SESSION_TOKEN'),
    path: get('REMOTE_STORAGE_PATH'),
    azure: {
      container: get('AZURE_CONTAINER'),
      accountName: get('AZURE_ACCOUNT_NAME'),
      accountKey: get('AZURE_ACCOUNT_KEY'),
    },
  };
}

/** Problems with the variables, for the start-up check. */
export function remoteStorageProblems(env: Record<string, string | undefined>): string[] {
  const url = env.AWS_ENDPOINT_URL;
  if (url === undefined || url.trim() === '') return [];
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return [];
  } catch {
    // reported below
  }
  return [`AWS_ENDPOINT_URL: must be an http(s) URL, got "${url}"`];
}
