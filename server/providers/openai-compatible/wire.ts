// OpenRouter's image and video wire (followed by other OpenAI-compatible servers), as the gateway
// reads and writes it. Fields are optional where the server may leave them out. Types only.
import type { ChatUsage } from '../openai/wire.ts';

/** Chat completions with `modalities`: the images come back as data URIs in `message.images`. */
export type ImageChatCompletion = {
  choices?: { message?: { images?: ({ image_url?: { url?: string } } | null)[] }; finish_reason?: string | null }[];
  usage?: ChatUsage;
};

export type ImageChatRequest = {
  model: string;
  messages: { role: 'user'; content: string | ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[] }[];
  modalities: ('image' | 'text')[];
  image_config?: { aspect_ratio?: string; image_size?: string };
  seed?: number;
};

/** `POST /videos` and `GET /videos/{id}`: pending → in_progress → completed | failed | cancelled | expired. */
export type Video = { id?: string; status?: string; error?: string | { message?: string } | null };

export type VideoRequest = {
  model: string;
  prompt: string;
  duration: number;
  aspect_ratio?: string;
  resolution?: '720p' | '1080p';
  seed?: number;
  frame_images?: { type: 'image_url'; image_url: { url: string }; frame_type: 'first_frame' }[];
};
