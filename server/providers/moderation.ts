// The moderation capability's adapter type: OpenAI's moderation request and answer.
import type { z } from 'zod';
import type { ModerationRequest, ModerationResponse } from '../../contract/embeddings.ts';
import type { Adapter } from './adapter.ts';

export type ModerationAdapter = Adapter<z.infer<typeof ModerationRequest>, z.infer<typeof ModerationResponse>>;
