// Every capability the gateway serves: one line each. The HTTP layer binds their routes
// (http/router.ts) and the composition root adds their job kinds (main.ts).
import type { CapabilityDescriptor } from './descriptor.ts';
import { embeddingsCapability } from './embeddings/index.ts';
import { mediaCapability } from './media/index.ts';
import { moderationCapability } from './moderation/index.ts';
import { speechCapability } from './speech/index.ts';
import { textCapability } from './text/index.ts';
import { transcriptionCapability } from './transcription/index.ts';

export const CAPABILITY_DESCRIPTORS: readonly CapabilityDescriptor[] = [textCapability, mediaCapability, speechCapability, transcriptionCapability, embeddingsCapability, moderationCapability];
