// Gemini generateContent / streamGenerateContent (alt=sse) wire format.
import { randomToken } from '../../runtime/secrets.ts';
import { ResponseAccumulator, systemMessagesAsUserText } from '../../translate/canonical.ts';
import type * as C from '../../translate/canonical.ts';
import { tokenCountOf, type StreamDecoder, type TextAdapter, type TokenCounter } from '../types.ts';
import { UpstreamStreamError } from '../../upstream/errors.ts';
import { parseJsonArgs, reasoningBudget } from '../../translate/arguments-and-effort.ts';
import { vendorTarget } from '../vendor-client.ts';
import { geminiClient, modelPath } from './client.ts';
import { asWire } from '../../upstream/json.ts';
import { clampUsage, whole, withReported } from '../../translate/usage.ts';
import type * as W from './wire.ts';

function encodeParts(m: C.Message, namesById: Map<string, string>): W.RequestPart[] {
  const parts: W.RequestPart[] = [];
  for (const p of m.content) {
    switch (p.type) {
      case 'text':
        if (p.text) parts.push({ text: p.text, ...(p.thoughtSignature ? { thoughtSignature: p.thoughtSignature } : {}) });
        break;
      case 'image':
        if (p.source.kind !== 'base64') throw new Error('Gemini images must be inlined before encoding');
        parts.push({ inlineData: { mimeType: p.source.mediaType, data: p.source.data } });
        break;
      case 'tool_call':
        namesById.set(p.id, p.name);
        parts.push({
          functionCall: { name: p.name, args: parseJsonArgs(p.arguments) },
          ...(p.thoughtSignature ? { thoughtSignature: p.thoughtSignature } : {}),
        });
        break;
      case 'tool_result': {
        const text = p.content.filter((c): c is C.TextPart => c.type === 'text').map((c) => c.text).join('\n');
        let response: Record<string, unknown>;
        try {
          const parsed: unknown = JSON.parse(text);
          response = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { result: parsed };
        } catch {
          response = { result: text };
        }
        if (p.isError) response = { error: response };
        parts.push({ functionResponse: { name: p.name ?? namesById.get(p.toolCallId) ?? 'tool', response } });
        for (const c of p.content) if (c.type === 'image' && c.source.kind === 'base64') parts.push({ inlineData: { mimeType: c.source.mediaType, data: c.source.data } });
        break;
      }
      case 'reasoning':
        // Thought summaries are not sent back; signatures travel on the parts they belong to.
        break;
    }
  }
  return parts;
}

export function encodeGenerateContentBody(req: C.Request): W.GenerateContentRequest {
  const contents: W.Content[] = [];
  const namesById = new Map<string, string>();
  // Gemini has one system instruction: later system messages travel as marked user text.
  for (const m of systemMessagesAsUserText(req.messages)) {
    const parts = encodeParts(m, namesById);
    if (!parts.length) continue;
    const role = m.role === 'assistant' ? 'model' : 'user';
    const prev = contents[contents.length - 1];
    if (prev && prev.role === role) prev.parts.push(...parts);
    else contents.push({ role, parts });
  }
  const body: W.GenerateContentRequest = { contents };
  if (req.system.length) body.systemInstruction = { parts: [{ text: req.system.join('\n\n') }] };
  if (req.tools?.length) {
    body.tools = [{ functionDeclarations: req.tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.parameters ?? { type: 'object' } })) }];
  }
  if (req.toolChoice !== undefined) {
    const tc = req.toolChoice;
    body.toolConfig = {
      functionCallingConfig: typeof tc === 'object' ? { mode: 'ANY', allowedFunctionNames: [tc.name] } : { mode: tc === 'required' ? 'ANY' : tc.toUpperCase() },
    };
  }
  const g: W.GenerationConfig = {};
  if (req.maxTokens !== undefined) g.maxOutputTokens = req.maxTokens;
  if (req.temperature !== undefined) g.temperature = req.temperature;
  if (req.topP !== undefined) g.topP = req.topP;
  if (req.topK !== undefined) g.topK = req.topK;
  if (req.seed !== undefined) g.seed = req.seed;
  if (req.presencePenalty !== undefined) g.presencePenalty = req.presencePenalty;
  if (req.frequencyPenalty !== undefined) g.frequencyPenalty = req.frequencyPenalty;
  if (req.stop?.length) g.stopSequences = req.stop.slice(0, 5);
  const f = req.responseFormat;
  if (f?.type === 'json_object') g.responseMimeType = 'application/json';
  if (f?.type === 'json_schema') {
    g.responseMimeType = 'application/json';
    g.responseJsonSchema = f.schema;
  }
  const budget = reasoningBudget(req.reasoning);
  if (budget !== undefined) g.thinkingConfig = budget > 0 ? { thinkingBudget: budget, includeThoughts: true } : { thinkingBudget: 0 };
  if (Object.keys(g).length) body.generationConfig = g;
  return body;
}

export function mapFinish(reason: string | undefined, hasCalls: boolean): C.FinishReason {
  switch (reason) {
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
      return 'content_filter';
    default:
      return hasCalls ? 'tool_calls' : 'stop';
  }
}

/** The tokens of the given modalities in a details list, or undefined when the list names none of them. */
function modalityTokens(details: W.ModalityTokenCount[], modalities: readonly string[]): number | undefined {
  const entries = details.filter((d) => modalities.includes(d.modality ?? ''));
  return entries.length ? entries.reduce((n, d) => n + whole(d.tokenCount), 0) : undefined;
}

/**
 * Gemini's usageMetadata. Input is the prompt (cached tokens included) plus the tool-use prompt;
 * output is the candidates plus the thoughts, which Gemini counts beside them. Modalities come
 * from the details lists: AUDIO apart, IMAGE and VIDEO as image input (video reaches the model as
 * frames, billed at the image rate); DOCUMENT stays text. Gemini reports no cache writes (implicit
 * caching has none; an explicit cache's storage is billed by the hour, outside any answer).
 */
export function decodeUsage(u: W.UsageMetadata | undefined): C.Usage | null {
  if (!u) return null;
  const thoughts = whole(u.thoughtsTokenCount);
  const usage: C.Usage = {
    inputTokens: whole(u.promptTokenCount) + whole(u.toolUsePromptTokenCount),
    outputTokens: whole(u.candidatesTokenCount) + thoughts,
    cachedTokens: whole(u.cachedContentTokenCount),
    cacheWriteTokens: 0,
    reasoningTokens: thoughts,
  };
  const input = [...(u.promptTokensDetails ?? []), ...(u.toolUsePromptTokensDetails ?? [])];
  const output = u.candidatesTokensDetails ?? [];
  return clampUsage(
    withReported(usage, {
      audioInputTokens: modalityTokens(input, ['AUDIO']),
      imageInputTokens: modalityTokens(input, ['IMAGE', 'VIDEO']),
      audioOutputTokens: modalityTokens(output, ['AUDIO']),
      imageOutputTokens: modalityTokens(output, ['IMAGE']),
    }),
  );
}

function partEvents(part: W.Part, nextIndex: () => number): C.StreamEvent[] {
  if (part.functionCall) {
    const index = nextIndex();
    const fc = part.functionCall;
    return [
      { type: 'tool_call_start', index, id: fc.id ?? `call_${randomToken(24)}`, name: fc.name, thoughtSignature: part.thoughtSignature },
      { type: 'tool_call_delta', index, arguments: JSON.stringify(fc.args ?? {}) },
    ];
  }
  if (typeof part.text === 'string') {
    const out: C.StreamEvent[] = [];
    if (part.text) out.push(part.thought ? { type: 'reasoning', text: part.text } : { type: 'text', text: part.text });
    if (part.thoughtSignature && !part.thought) out.push({ type: 'text_signature', signature: part.thoughtSignature });
    return out;
  }
  return [];
}

/** A unary response is one complete chunk: decode it as a one-event stream. */
export function decodeGenerateContentResponse(body: W.GenerateContentResponse): C.Response {
  const dec = new GenerateContentStreamDecoder();
  const acc = new ResponseAccumulator();
  for (const e of [...dec.push({ data: JSON.stringify(body) }), ...dec.end()]) acc.push(e);
  return acc.response();
}

export class GenerateContentStreamDecoder implements StreamDecoder {
  private started = false;
  private tools = 0;
  private usage: C.Usage | null = null;
  private finished = false;
  private sawCalls = false;

  push(e: { data: string }): C.StreamEvent[] {
    return this.pushParsed(JSON.parse(e.data));
  }

  pushParsed(data: unknown): C.StreamEvent[] {
    const chunk = asWire<W.GenerateContentResponse>(data);
    if (chunk.error) throw new UpstreamStreamError(chunk.error.message ?? 'upstream stream error', chunk.error.status, chunk.error);
    const out: C.StreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: chunk.responseId ?? `gen-${randomToken(24)}`, model: chunk.modelVersion ?? '' });
    }
    const cand = chunk.candidates?.[0];
    for (const part of cand?.content?.parts ?? []) {
      const events = partEvents(part, () => this.tools++);
      if (part.functionCall) this.sawCalls = true;
      out.push(...events);
    }
    if (chunk.usageMetadata) this.usage = decodeUsage(chunk.usageMetadata);
    if (cand?.finishReason) {
      this.finished = true;
      out.push({ type: 'finish', reason: mapFinish(cand.finishReason, this.sawCalls) });
    } else if (chunk.promptFeedback?.blockReason && !cand) {
      this.finished = true;
      out.push({ type: 'finish', reason: 'content_filter' });
    }
    return out;
  }

  end(): C.StreamEvent[] {
    if (!this.finished) throw new UpstreamStreamError('the upstream stream ended without a finish reason');
    return this.usage ? [{ type: 'usage', usage: this.usage }] : [];
  }
}

/**
 * `POST /models/{model}:countTokens` with the generation's whole request as `generateContentRequest`
 * (system instruction, tools and config included in the count, as a generation would send them).
 */
export const geminiCounter: TokenCounter = {
  call: (req, ctx, { http }) => ({
    ...vendorTarget(geminiClient, ctx.provider, modelPath(req.model, 'countTokens')),
    body: { generateContentRequest: { model: `models/${req.model}`, ...http.body } },
  }),
  read: (answer) => tokenCountOf(asWire<W.CountTokensResponse | null>(answer)?.totalTokens),
};

export const geminiGenerateContent: TextAdapter = {
  format: 'gemini',
  nativeWebSearch: false,
  // Gemini reads only inline image bytes (or its own file URIs).
  needsInlineImages: true,
  endpoint: (req, ctx) => vendorTarget(geminiClient, ctx.provider, modelPath(req.model, req.stream ? 'streamGenerateContent?alt=sse' : 'generateContent')),
  body: encodeGenerateContentBody,
  decode: (body) => decodeGenerateContentResponse(asWire<W.GenerateContentResponse>(body)),
  streamDecoder: () => new GenerateContentStreamDecoder(),
  counter: geminiCounter,
};
