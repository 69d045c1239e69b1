import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

/** A real S3 API server (s3rver) on 127.0.0.1 with one bucket, and the env that points at it. */
export interface TestS3 {
  readonly bucket: string;
  readonly endpoint: string;
  /** BUCKET_NAME, AWS_ENDPOINT_URL, AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY. */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

export async function startTestS3(bucket = 'parley-models'): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'parley-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    bucket,
    endpoint,
    env: {
      BUCKET_NAME: bucket,
      AWS_ENDPOINT_URL: endpoint,
      AWS_DEFAULT_REGION: 'us-east-1',
      // s3rver's fixed credentials.
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    close: async () => {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
