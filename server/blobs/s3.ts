// Blobs in an S3-compatible bucket (AWS S3, MinIO, R2, …): what several instances share. Uploads
// stream through the SDK's multipart Upload (parts of 8 MiB, never the whole blob in memory);
// downloads stream the object's body. The content type is the object's own.
import type { S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { checkKey, type BlobInfo, type BlobStore } from './store.ts';

export type S3Settings = { bucket: string; prefix: string; endpoint?: string; region: string; accessKeyId?: string; secretAccessKey?: string; forcePathStyle: boolean };

/** S3_BUCKET (and S3_ENDPOINT, S3_REGION, S3_PREFIX, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_FORCE_PATH_STYLE), or null. */
export function s3Settings(env: NodeJS.ProcessEnv): S3Settings | null {
  if (!env.S3_BUCKET) return null;
  return {
    bucket: env.S3_BUCKET,
    prefix: (env.S3_PREFIX ?? '').replace(/^\/+|\/+$/g, ''),
    endpoint: env.S3_ENDPOINT || undefined,
    region: env.S3_REGION ?? env.AWS_REGION ?? 'us-east-1',
    accessKeyId: env.S3_ACCESS_KEY_ID,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY,
    // Self-hosted servers usually serve buckets by path, not by host name.
    forcePathStyle: env.S3_FORCE_PATH_STYLE ? env.S3_FORCE_PATH_STYLE === 'true' : !!env.S3_ENDPOINT,
  };
}

/** GetObject says NoSuchKey; HeadObject, having no body, only its status. */
const isMissing = (err: unknown) => (err as { name?: string }).name === 'NoSuchKey' || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404;

export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const;
  private constructor(
    private readonly client: S3Client,
    private readonly sdk: typeof import('@aws-sdk/client-s3'),
    private readonly upload: typeof import('@aws-sdk/lib-storage'),
    private readonly s: S3Settings,
  ) {}

  /** The SDK is loaded only when S3 is configured (it is large, and idle otherwise). */
  static async open(s: S3Settings): Promise<S3BlobStore> {
    const [sdk, upload] = await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]);
    const client = new sdk.S3Client({
      region: s.region,
      endpoint: s.endpoint,
      forcePathStyle: s.forcePathStyle,
      ...(s.accessKeyId && s.secretAccessKey ? { credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey } } : {}),
    });
    return new S3BlobStore(client, sdk, upload, s);
  }

  private key(key: string) {
    checkKey(key);
    return this.s.prefix ? `${this.s.prefix}/${key}` : key;
  }

  async put(key: string, body: Readable, contentType: string): Promise<BlobInfo> {
    let size = 0;
    body.on('data', (c: Buffer) => (size += c.length));
    await new this.upload.Upload({ client: this.client, params: { Bucket: this.s.bucket, Key: this.key(key), Body: body, ContentType: contentType }, partSize: 8 * 1024 * 1024, queueSize: 2 }).done();
    return { size, contentType };
  }

  async stat(key: string): Promise<BlobInfo | null> {
    try {
      const r = await this.client.send(new this.sdk.HeadObjectCommand({ Bucket: this.s.bucket, Key: this.key(key) }));
      return { size: Number(r.ContentLength ?? 0), contentType: r.ContentType ?? 'application/octet-stream' };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async get(key: string): Promise<(BlobInfo & { body: Readable }) | null> {
    try {
      const r = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.s.bucket, Key: this.key(key) }));
      return { body: r.Body as Readable, size: Number(r.ContentLength ?? 0), contentType: r.ContentType ?? 'application/octet-stream' };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.s.bucket, Key: this.key(key) }));
  }

  close(): void {
    this.client.destroy();
  }
}
