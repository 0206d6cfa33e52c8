// OpenAI-format moderation (`POST /moderations`).
import type { ModerationAdapter } from '../moderation.ts';
import { postJson } from '../../upstream/http.ts';
import { vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import type * as W from './wire.ts';
import { openaiClient } from './client.ts';

export const openAiModeration: ModerationAdapter = {
  async run(body, call) {
    const answer = await call.waitOn(
      postJson({ ...vendorTarget(openaiClient, call.provider, '/moderations'), body: { ...body, model: call.upstreamModel }, signal: call.signal }),
    );
    return asWire<W.Moderation>(answer.json);
  },
};
