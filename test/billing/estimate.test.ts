// server/pipeline/estimate.ts: the hold of a text request bounds what a provider can bill for each
// input but text — images by the size read from their header and their detail, uncompressed audio
// by its length, and what nothing bounds (documents, compressed audio, stored content) flagged —
// exactly, on real file headers built here.
import { describe, expect, it } from 'vitest';
import { ChatCompletionRequest } from '../../contract/chat.ts';
import { GeminiGenerateContentRequest } from '../../contract/gemini.ts';
import { MessagesRequest } from '../../contract/messages.ts';
import { ResponsesRequest } from '../../contract/responses.ts';
import { AUDIO_TOKENS_PER_SECOND, estimatePromptTokens, promptTokensBound, textEstimate } from '../../server/pipeline/estimate.ts';
import { base64Bytes, base64Length } from '../../server/media/base64-bytes.ts';
import { imageSize } from '../../server/media/image-header.ts';
import { wavSeconds } from '../../server/media/wav-header.ts';
import { anthropicImageTokens } from '../../server/providers/anthropic/image-tokens.ts';
import { GEMINI_MOST_IMAGE_TOKENS, geminiImageTokens } from '../../server/providers/gemini/image-tokens.ts';
import { openAiImageTokens, openAiTiles } from '../../server/providers/openai/image-tokens.ts';
import { anyImageTokens, imageTokensOf } from '../../server/providers/registry.ts';
import { chatToCanonical } from '../../server/translate/chat.ts';
import { geminiToCanonical } from '../../server/translate/gemini.ts';
import { messagesToCanonical } from '../../server/translate/messages.ts';
import { responsesToCanonical } from '../../server/translate/responses.ts';
import { PDF, b64, dataUrl, gif, jpegHeader, png, wav, webp } from '../helpers/media-files.ts';

const QUESTION = 'What is in this image?'; // 22 characters: 6 tokens
const chatWithImage = (url: string, detail?: 'low' | 'high' | 'auto') =>
  chatToCanonical(
    ChatCompletionRequest.parse({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }, { type: 'image_url', image_url: { url, ...(detail ? { detail } : {}) } }] }] }),
  );

describe('image headers, read from base64 without decoding the rest', () => {
  it('PNG, JPEG (past a 20 kB EXIF segment), GIF and the three WebP kinds', () => {
    expect(imageSize(b64(png(1024, 1024)))).toEqual({ w: 1024, h: 1024 });
    expect(imageSize(b64(png(3000, 17)))).toEqual({ w: 3000, h: 17 });
    expect(imageSize(b64(jpegHeader(1920, 1080)))).toEqual({ w: 1920, h: 1080 });
    expect(imageSize(b64(gif(640, 480)))).toEqual({ w: 640, h: 480 });
    expect(imageSize(b64(webp('VP8 ', 800, 600)))).toEqual({ w: 800, h: 600 });
    expect(imageSize(b64(webp('VP8L', 1000, 10)))).toEqual({ w: 1000, h: 10 });
    expect(imageSize(b64(webp('VP8X', 4000, 3000)))).toEqual({ w: 4000, h: 3000 });
    // base64url spells the same bytes.
    expect(imageSize(b64(png(77, 88)).replace(/\+/g, '-').replace(/\//g, '_'))).toEqual({ w: 77, h: 88 });
  });

  it('anything else, a cut-off header or text that is not base64: unknown', () => {
    expect(imageSize(b64(PDF))).toBeNull();
    expect(imageSize(b64(png(10, 10)).slice(0, 16))).toBeNull();
    expect(imageSize('iVBORw0KGgo!!!!AAAANSUhEUgAABAAAAAQA')).toBeNull();
    expect(imageSize('')).toBeNull();
  });

  it('base64 random access matches a full decode', () => {
    const bytes = Buffer.from(Array.from({ length: 301 }, (_, i) => (i * 37) % 256));
    const text = b64(bytes);
    expect(base64Length(text)).toBe(301);
    for (const [at, n] of [[0, 1], [1, 5], [2, 7], [100, 64], [297, 4], [300, 1]] as const) expect(Buffer.from(base64Bytes(text, at, n)!)).toEqual(bytes.subarray(at, at + n));
    expect(base64Bytes(text, 300, 2)).toBeNull();
  });
});

describe('what one image can cost, by vendor rule', () => {
  const square = { w: 1024, h: 1024 };
  it('OpenAI: gpt-4o-mini tiles (the largest), or 32-px patches × 2.46', () => {
    // 1024² → 768² → 4 tiles: 2,833 + 4 × 5,667 (gpt-4o: 85 + 4 × 170 = 765).
    expect(openAiImageTokens(square, 'high')).toBe(25_501);
    expect(openAiImageTokens(square, 'low')).toBe(2_833);
    // The guide's example: 2048×4096 → 1024×2048 → 768×1536, 6 tiles (1,105 tokens at gpt-4o).
    expect(openAiTiles({ w: 2048, h: 4096 })).toBe(6);
    expect(openAiImageTokens(null, 'high')).toBe(2_833 + 8 * 5_667);
    // Low detail at any size: the patch rule's cap, 1,536 × 2.46.
    expect(openAiImageTokens(null, 'low')).toBe(3_779);
  });
  it('Anthropic: w × h / 750 after the long edge is cut to 1,568', () => {
    expect(anthropicImageTokens(square, 'high')).toBe(1_399);
    expect(anthropicImageTokens({ w: 4000, h: 2000 }, 'low')).toBe(Math.ceil((1568 * 784) / 750));
    expect(anthropicImageTokens(null, 'high')).toBe(3_279);
  });
  it('Gemini: 258-token tiles, or a fixed count per image at its highest resolution', () => {
    expect(geminiImageTokens(square, 'high')).toBe(2_240);
    expect(geminiImageTokens({ w: 3072, h: 257 }, 'high')).toBe(24 * 258);
    expect(GEMINI_MOST_IMAGE_TOKENS).toBe(6_192);
  });
  it('any provider: the largest rule; a model\'s upstreams: their vendors\' largest (any, when one has no rule)', () => {
    expect(anyImageTokens(square, 'high')).toBe(25_501);
    expect(anyImageTokens(null, 'high')).toBe(48_169);
    expect(anyImageTokens(null, 'low')).toBe(6_192);
    expect(imageTokensOf(['anthropic'])(null, 'high')).toBe(3_279);
    expect(imageTokensOf(['anthropic', 'gemini'])(null, 'high')).toBe(6_192);
    expect(imageTokensOf(['anthropic', 'openai-compatible'])(null, 'high')).toBe(48_169);
  });
});

describe('the hold of a prompt', () => {
  it('a 1024×1024 PNG at high detail (or auto, or none said): its size read from the data URL', () => {
    const url = dataUrl('image/png', png(1024, 1024));
    for (const detail of ['high', 'auto', undefined] as const) expect(promptTokensBound(chatWithImage(url, detail))).toEqual({ tokens: 6 + 25_501, unsized: 0, unbounded: false });
    // The estimate billed when an upstream reports nothing is unchanged: 85 tokens an image.
    expect(estimatePromptTokens(chatWithImage(url))).toBe(6 + 85);
  });

  it('the same image at low detail', () => {
    expect(promptTokensBound(chatWithImage(dataUrl('image/png', png(1024, 1024)), 'low'))).toEqual({ tokens: 6 + 2_833, unsized: 0, unbounded: false });
  });

  it('an image by URL: any size, admitted on a usual image (85) and held at its bound; an Anthropic-only model: its rule', () => {
    const req = chatWithImage('https://example.com/cat.png');
    expect(promptTokensBound(req)).toEqual({ tokens: 6 + 85, unsized: 48_169 - 85, unbounded: false });
    expect(textEstimate(req, { max_output_tokens: 10 })).toEqual({ input: 6 + 85, output: 10, mostInput: 6 + 48_169 });
    expect(promptTokensBound(chatWithImage('https://example.com/cat.png', 'low'))).toEqual({ tokens: 6 + 85, unsized: 6_192 - 85, unbounded: false });
    expect(promptTokensBound(req, imageTokensOf(['anthropic']))).toEqual({ tokens: 6 + 85, unsized: 3_279 - 85, unbounded: false });
    expect(promptTokensBound(chatWithImage(dataUrl('image/png', png(1024, 1024))), imageTokensOf(['anthropic']))).toEqual({ tokens: 6 + 1_399, unsized: 0, unbounded: false });
  });

  it('images inside tool results and images by file id count too', () => {
    const { request } = messagesToCanonical(
      MessagesRequest.parse({
        model: 'm',
        max_tokens: 10,
        messages: [
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'shot', input: {} }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: b64(jpegHeader(1920, 1080)) } }] },
              { type: 'image', source: { type: 'file', file_id: 'file_1' } },
            ],
          },
        ],
      }),
    );
    // 1920×1080 → 1365⅓×768: 3 × 2 tiles; the file: any size. Text: "shot", "{}" and the tool id's JSON.
    const text = Math.ceil(('shot'.length + '{}'.length) / 4);
    expect(promptTokensBound(request)).toEqual({ tokens: text + (2_833 + 6 * 5_667) + 85, unsized: 48_169 - 85, unbounded: false });
  });

  it('a WAV of known length: its seconds × 32 tokens (Gemini inline audio)', () => {
    const audio = wav(1.5);
    expect(wavSeconds(b64(audio))).toBe(1.5);
    const { request } = geminiToCanonical(
      GeminiGenerateContentRequest.parse({ contents: [{ role: 'user', parts: [{ text: 'Transcribe' }, { inlineData: { mimeType: 'audio/wav', data: b64(audio) } }] }] }),
      'gemini-2.5-flash',
      false,
    );
    // "Transcribe": 3 tokens; 1.5 s → 2 whole seconds × 32.
    expect(promptTokensBound(request)).toEqual({ tokens: 3 + 2 * AUDIO_TOKENS_PER_SECOND, unsized: 0, unbounded: false });
    // Compressed audio has no bytes-per-second floor: nothing bounds it.
    const mp3 = geminiToCanonical(GeminiGenerateContentRequest.parse({ contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'audio/mp3', data: '//uQxAAAAAAA' } }] }] }), 'g', false);
    expect(promptTokensBound(mp3.request)).toEqual({ tokens: 0, unsized: 0, unbounded: true });
  });

  it('a PDF: unbounded; held at the context window when the catalog knows it, else without bound', () => {
    const body = MessagesRequest.parse({
      model: 'm',
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: b64(PDF) } }, { type: 'text', text: 'Summarize this' }] }],
    });
    const { request, nativeOnly } = messagesToCanonical(body);
    expect(nativeOnly).toMatchObject({ param: 'messages[0].content[0].type' });
    // The text beside the document is counted (14 characters: 4 tokens).
    expect(promptTokensBound(request)).toEqual({ tokens: 4, unsized: 0, unbounded: true });
    expect(textEstimate(request, undefined, { contextWindow: 200_000 })).toEqual({ input: 4, output: 100, mostInput: 200_000 });
    expect(textEstimate(request, undefined, {})).toEqual({ input: 4, output: 100, mostInput: Infinity });
    // A PDF file by id or URL (Responses), and a text document (counted as text).
    const responses = responsesToCanonical(
      ResponsesRequest.parse({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }, { type: 'input_file', file_data: dataUrl('application/pdf', PDF), filename: 'a.pdf' }] }] }),
      new Map(),
    );
    expect(responses.request.opaque).toEqual([{ kind: 'media' }, { kind: 'media', mediaType: 'application/pdf', data: b64(PDF) }]);
    expect(promptTokensBound(responses.request).unbounded).toBe(true);
    const text = messagesToCanonical(MessagesRequest.parse({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x'.repeat(400) } }] }] }));
    expect(promptTokensBound(text.request)).toEqual({ tokens: 100, unsized: 0, unbounded: false });
  });

  it('content the provider keeps: unbounded', () => {
    const decoded = responsesToCanonical(ResponsesRequest.parse({ model: 'm', input: 'Go on', previous_response_id: 'resp_1' }), new Map());
    expect(decoded.request.opaque).toEqual([{ kind: 'stored', what: 'previous_response_id' }]);
    expect(promptTokensBound(decoded.request)).toEqual({ tokens: 2, unsized: 0, unbounded: true });
  });

  it('text-only requests: the estimate as before, nothing flagged', () => {
    const req = chatToCanonical(ChatCompletionRequest.parse({ model: 'm', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'x'.repeat(40) }] }));
    expect(promptTokensBound(req)).toEqual({ tokens: estimatePromptTokens(req), unsized: 0, unbounded: false });
    expect(textEstimate(req, { max_output_tokens: 50 })).toEqual({ input: 13, output: 50 });
  });
});
