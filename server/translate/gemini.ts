// The Gemini client format (Google's generateContent): request → canonical, canonical → answer and
// stream chunks. The inverse of providers/gemini/generate-content.ts, so what a Gemini model said
// (parts, thought signatures, usage) reaches a Gemini client as Gemini would have sent it.
import type { z } from 'zod';
import type {
  GeminiCountTokensRequest,
  GeminiErrorBody,
  GeminiGenerateContentInput,
  GeminiGenerateContentResponse,
  GeminiPart,
  GeminiUsageMetadata,
} from '../../contract/gemini.ts';
import { randomToken } from '../runtime/secrets.ts';
import { errors, type GatewayError } from '../runtime/errors.ts';
import { budgetToEffort, parseJsonArgs } from './arguments-and-effort.ts';
import type * as C from './canonical.ts';
import { droppedFields, type FieldSets } from './request-fields.ts';

type GenerationConfig = NonNullable<GeminiGenerateContentInput['generationConfig']>;
type ThinkingConfig = NonNullable<GenerationConfig['thinkingConfig']>;
type Tool = NonNullable<GeminiGenerateContentInput['tools']>[number];
type FunctionResponse = NonNullable<GeminiPart['functionResponse']>;
type Usage = z.infer<typeof GeminiUsageMetadata>;

const set = (...names: string[]) => new Set(names);

/** Gemini's GenerateContentRequest (the @google/genai SDK's body), sorted as request-fields.ts sorts the other formats. */
export const GEMINI_FIELDS: FieldSets = {
  translated: set('model', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig'),
  silent: set(),
  known: set('safetySettings', 'cachedContent', 'labels', 'serviceTier', 'modelArmorConfig'),
};

/** The generationConfig fields the decoder reads; the others are named `generationConfig.<field>` when dropped. */
const GENERATION_FIELDS = set(
  'temperature', 'topP', 'topK', 'maxOutputTokens', 'stopSequences', 'candidateCount', 'seed', 'presencePenalty', 'frequencyPenalty',
  'responseMimeType', 'responseSchema', 'responseJsonSchema', 'thinkingConfig', 'responseModalities',
);

/** Tool entries other models have: function declarations, and Google Search as the gateway's web search. */
const TRANSLATED_TOOLS = set('functionDeclarations', 'googleSearch', 'googleSearchRetrieval');

/** Image types every provider reads; other media (and HEIC) reach Gemini models only. */
const IMAGE_TYPES = set('image/png', 'image/jpeg', 'image/gif', 'image/webp');
const imageType = (mimeType: string | undefined): string | undefined => {
  const t = mimeType?.toLowerCase().split(';')[0]!.trim();
  const normal = t === 'image/jpg' ? 'image/jpeg' : t;
  return normal && IMAGE_TYPES.has(normal) ? normal : undefined;
};
const IMAGE_EXTENSIONS: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

/** Part fields that carry no content of their own. */
const PART_METADATA = set('thought', 'thoughtSignature', 'videoMetadata', 'partMetadata', 'mediaResolution');

/** A part only Gemini models can take: the request is then routed to them alone. */
class NativeOnly extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** OpenAPI's int64 fields travel as JSON strings in Google's schemas. */
const INT64_KEYWORDS = set('minItems', 'maxItems', 'minLength', 'maxLength', 'minProperties', 'maxProperties');

/**
 * Gemini's OpenAPI-subset Schema (`parameters`, `responseSchema`) → JSON Schema: types lower-cased,
 * `nullable` as a type union with "null" (and null among the `enum` values), int64 strings as numbers,
 * the Gemini-only `propertyOrdering` left out; every other keyword kept, at every depth.
 */
export function openApiToJsonSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const sub = (v: unknown): unknown => (isRecord(v) ? openApiToJsonSchema(v) : v);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'nullable' || k === 'propertyOrdering') continue;
    if (k === 'type') {
      if (typeof v === 'string' && v.toUpperCase() !== 'TYPE_UNSPECIFIED') out.type = v.toLowerCase();
    } else if (k === 'properties' && isRecord(v)) out.properties = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, sub(s)]));
    else if (k === 'items') out.items = sub(v);
    else if (k === 'anyOf' && Array.isArray(v)) out.anyOf = v.map(sub);
    else out[k] = INT64_KEYWORDS.has(k) && typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  }
  if (schema.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.anyOf)) out.anyOf = [...out.anyOf, { type: 'null' }];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  }
  return out;
}

/** What decoding the conversation learns along the way. */
type Seen = {
  /** Every function call so far, to match the responses to (Gemini may leave ids out). */
  calls: { id: string; name: string; answered: boolean }[];
  /** Ids made for calls and responses that came without one. */
  made: number;
  /** What only Gemini models read, for the hold (canonical OpaqueInput). */
  opaque: C.OpaqueInput[];
};

/**
 * What the hold needs of data only Gemini models take (pipeline/estimate.ts): text by its bytes;
 * an image in Google's file store (its size unknown); audio, video and documents by their media
 * type and, inline, their bytes.
 */
function opaqueData(mimeType: string | undefined, data: string | undefined): C.OpaqueInput {
  const type = mimeType?.toLowerCase() ?? '';
  if (data !== undefined && (type.startsWith('text/') || type === 'application/json')) return { kind: 'text', chars: Math.ceil((data.length * 3) / 4) };
  if (type.startsWith('image/')) return { kind: 'image', source: data !== undefined ? { kind: 'base64', mediaType: type, data } : null };
  return { kind: 'media', ...(mimeType !== undefined ? { mediaType: mimeType } : {}), ...(data !== undefined ? { data } : {}) };
}

/** An id for a call without one: the same conversation gets the same ids on every turn. */
const madeId = (name: string, seen: Seen) => `call_${name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 24)}_${seen.made++}`;

/** The call a response answers: the one with its id, else the earliest unanswered call of its name. */
function answeredCall(fr: FunctionResponse, seen: Seen): string {
  const call =
    (fr.id !== undefined ? seen.calls.find((c) => c.id === fr.id && !c.answered) : undefined) ?? seen.calls.find((c) => !c.answered && c.name === fr.name);
  if (!call) return fr.id ?? madeId(fr.name, seen);
  call.answered = true;
  return call.id;
}

/** `{output: x}` and `{result: x}` (Gemini's conventions, the upstream encoder's wrapping) are x. */
const unwrapped = (v: unknown): unknown => {
  if (!isRecord(v)) return v;
  const keys = Object.keys(v);
  return keys.length === 1 && (keys[0] === 'output' || keys[0] === 'result') ? v[keys[0]] : v;
};
const asText = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? 'null'));

/**
 * A function response as a tool result: `{error: x}` alone is a failed call; the text is the JSON
 * of the response, or of x for `{output: x}`/`{result: x}`/`{error: x}` (a string as it is).
 */
function toolResult(fr: FunctionResponse, at: string, seen: Seen): C.ToolResultPart {
  const response = fr.response ?? {};
  const isError = Object.keys(response).length === 1 && 'error' in response;
  const content: C.ToolResultPart['content'] = [{ type: 'text', text: asText(unwrapped(isError ? response.error : response)) }];
  let refused: NativeOnly | null = null;
  for (const [k, p] of (fr.parts ?? []).entries()) {
    const mediaType = p.inlineData ? imageType(p.inlineData.mimeType) : undefined;
    if (p.inlineData && mediaType) {
      content.push({ type: 'image', source: { kind: 'base64', mediaType, data: p.inlineData.data } });
      continue;
    }
    const fileData = (p as { fileData?: { mimeType?: string } }).fileData;
    seen.opaque.push(p.inlineData ? opaqueData(p.inlineData.mimeType, p.inlineData.data) : fileData ? opaqueData(fileData.mimeType, undefined) : { kind: 'text', chars: JSON.stringify(p).length });
    refused ??= p.inlineData
      ? new NativeOnly(`${p.inlineData.mimeType} data can only be sent to Gemini models.`, `${at}.functionResponse.parts[${k}].inlineData`)
      : new NativeOnly('Function response parts other than inline images can only be sent to Gemini models.', `${at}.functionResponse.parts[${k}]`);
  }
  if (refused) {
    // The whole response reaches Gemini models only: the hold counts the rest of it too.
    for (const c of content) seen.opaque.push(c.type === 'text' ? { kind: 'text', chars: c.text.length } : { kind: 'image', source: c.source });
    throw refused;
  }
  return { type: 'tool_result', toolCallId: answeredCall(fr, seen), name: fr.name, content, ...(isError ? { isError: true } : {}) };
}

/** A file URI other providers can fetch: an http(s) image that is not one of Google's own files. */
function fileImage(fileData: NonNullable<GeminiPart['fileData']>): C.ImageSource | undefined {
  let url: URL;
  try {
    url = new URL(fileData.fileUri);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname.endsWith('.googleapis.com')) return undefined;
  const byName = IMAGE_EXTENSIONS[url.pathname.split('.').pop()?.toLowerCase() ?? ''];
  const known = fileData.mimeType === undefined ? byName : imageType(fileData.mimeType);
  return known ? { kind: 'url', url: fileData.fileUri } : undefined;
}

/**
 * Adds one part to a turn's canonical parts. Thought parts are reasoning, signed on the part that
 * carries the signature; consecutive thoughts before a signature join, and a text part carrying only
 * a signature (Gemini's last stream chunk) signs the text before it, as the upstream decoder does.
 */
function decodePart(p: GeminiPart, at: string, parts: C.Part[], seen: Seen): void {
  const last = parts[parts.length - 1];
  const signature = p.thoughtSignature ? { thoughtSignature: p.thoughtSignature } : {};
  if (p.functionCall) {
    const fc = p.functionCall;
    const id = fc.id ?? madeId(fc.name, seen);
    seen.calls.push({ id, name: fc.name, answered: false });
    parts.push({ type: 'tool_call', id, name: fc.name, arguments: JSON.stringify(fc.args ?? {}), ...signature });
  } else if (p.functionResponse) parts.push(toolResult(p.functionResponse, at, seen));
  else if (p.inlineData) {
    const mediaType = imageType(p.inlineData.mimeType);
    if (!mediaType) {
      seen.opaque.push(opaqueData(p.inlineData.mimeType, p.inlineData.data));
      throw new NativeOnly(`${p.inlineData.mimeType} data can only be sent to Gemini models.`, `${at}.inlineData`);
    }
    parts.push({ type: 'image', source: { kind: 'base64', mediaType, data: p.inlineData.data } });
  } else if (p.fileData) {
    const source = fileImage(p.fileData);
    if (!source) {
      seen.opaque.push(opaqueData(p.fileData.mimeType ?? (/\.(png|jpe?g|gif|webp)$/i.test(p.fileData.fileUri) ? 'image/*' : undefined), undefined));
      throw new NativeOnly('File URIs other than http(s) image URLs can only be sent to Gemini models.', `${at}.fileData`);
    }
    parts.push({ type: 'image', source });
  } else if (typeof p.text === 'string' || p.thoughtSignature) {
    const text = p.text ?? '';
    if (p.thought) {
      if (last?.type === 'reasoning' && !last.signature && !last.redactedData) {
        last.text += text;
        if (p.thoughtSignature) last.signature = p.thoughtSignature;
      } else if (text || p.thoughtSignature) parts.push({ type: 'reasoning', text, ...(p.thoughtSignature ? { signature: p.thoughtSignature } : {}) });
    } else if (text) parts.push({ type: 'text', text, ...signature });
    else if (p.thoughtSignature) {
      if (last?.type === 'text' && !last.thoughtSignature) last.thoughtSignature = p.thoughtSignature;
      else parts.push({ type: 'text', text: '', thoughtSignature: p.thoughtSignature });
    }
  } else {
    const field = Object.keys(p).find((k) => !PART_METADATA.has(k) && p[k] !== undefined);
    if (field) {
      // Code the model ran and its result, and parts of kinds this gateway does not know: read as text.
      seen.opaque.push({ kind: 'text', chars: JSON.stringify(p).length });
      throw new NativeOnly(`Parts with '${field}' can only be sent to Gemini models.`, `${at}.${field}`);
    }
  }
}

function reasoningOf(t: ThinkingConfig | undefined): C.Request['reasoning'] {
  if (!t) return undefined;
  const level = t.thinkingLevel?.toLowerCase();
  const effort = level === 'minimal' || level === 'low' || level === 'medium' || level === 'high' ? level : undefined;
  const budget = t.thinkingBudget;
  if (budget === 0) return { effort: 'none' };
  // Dynamic thinking leaves it to the model, like Anthropic's adaptive thinking (Messages decodes that the same way).
  if (budget === -1) return { effort: effort ?? 'high', adaptive: true };
  if (budget !== undefined && budget > 0) return { budgetTokens: budget, effort: effort ?? budgetToEffort(budget) };
  return effort ? { effort } : undefined;
}

/**
 * `responseMimeType` with its schema. `text/x.enum` answers bare enum text, which JSON output cannot
 * give: it and other types are left out (named), as is a schema sent without the JSON type.
 */
function responseFormatOf(g: GenerationConfig | undefined, dropped: string[]): C.ResponseFormat | undefined {
  const mime = g?.responseMimeType?.toLowerCase();
  if (mime === 'application/json') {
    if (g?.responseJsonSchema) return { type: 'json_schema', name: 'response', schema: g.responseJsonSchema, param: 'generationConfig.responseJsonSchema' };
    if (g?.responseSchema) return { type: 'json_schema', name: 'response', schema: openApiToJsonSchema(g.responseSchema), param: 'generationConfig.responseSchema' };
    return { type: 'json_object', param: 'generationConfig.responseMimeType' };
  }
  if (mime && mime !== 'text/plain') dropped.push('generationConfig.responseMimeType');
  else if (g?.responseJsonSchema || g?.responseSchema) dropped.push(g.responseJsonSchema ? 'generationConfig.responseJsonSchema' : 'generationConfig.responseSchema');
  return undefined;
}

/** AUTO/VALIDATED → auto, ANY → required (one allowed name: that function), NONE → none. */
function toolChoiceOf(mode: string | undefined, allowed: string[] | undefined): C.ToolChoice | undefined {
  switch (mode?.toUpperCase()) {
    case 'ANY':
      return allowed?.length === 1 ? { name: allowed[0]! } : 'required';
    case 'NONE':
      return 'none';
    case 'AUTO':
    case 'VALIDATED':
      return 'auto';
    default:
      return undefined;
  }
}

export type DecodedGemini = {
  request: C.Request;
  /** Set when the request holds what only Gemini models can take. */
  nativeOnly: GatewayError | null;
};

/** A Gemini body → canonical. `model` comes from the path (`models/{model}:…`), `stream` from the method. */
export function geminiToCanonical(body: GeminiGenerateContentInput, model: string, stream: boolean): DecodedGemini {
  const seen: Seen = { calls: [], made: 0, opaque: [] };
  const dropped: string[] = [];
  let nativeOnly: GatewayError | null = null;
  const refuse = (err: NativeOnly) => {
    nativeOnly ??= errors.invalid(err.message, err.param);
  };
  const decode = (p: GeminiPart, at: string, parts: C.Part[]) => {
    try {
      decodePart(p, at, parts, seen);
    } catch (err) {
      if (!(err instanceof NativeOnly)) throw err;
      refuse(err);
    }
  };

  const system: string[] = [];
  const si = body.systemInstruction;
  if (typeof si === 'string') system.push(si);
  else
    si?.parts.forEach((p, j) => {
      if (typeof p.text === 'string' && !p.thought) {
        if (p.text) system.push(p.text);
      } else {
        refuse(new NativeOnly('System instruction parts other than text can only be sent to Gemini models.', `systemInstruction.parts[${j}]`));
        seen.opaque.push(p.inlineData ? opaqueData(p.inlineData.mimeType, p.inlineData.data) : p.fileData ? opaqueData(p.fileData.mimeType, undefined) : { kind: 'text', chars: JSON.stringify(p).length });
      }
    });

  const messages: C.Message[] = [];
  body.contents.forEach((c, i) => {
    const parts: C.Part[] = [];
    c.parts.forEach((p, j) => decode(p, `contents[${i}].parts[${j}]`, parts));
    if (!parts.length) return;
    const role = c.role === 'model' ? 'assistant' : 'user';
    const prev = messages[messages.length - 1];
    if (prev && prev.role === role) prev.content.push(...parts);
    else messages.push({ role, content: parts });
  });

  const tools: C.Tool[] = [];
  let webSearch = false;
  body.tools?.forEach((t: Tool, i) => {
    for (const d of t.functionDeclarations ?? []) {
      const parameters = d.parametersJsonSchema ?? (d.parameters ? openApiToJsonSchema(d.parameters) : { type: 'object', properties: {} });
      tools.push({ name: d.name, ...(d.description !== undefined ? { description: d.description } : {}), parameters });
    }
    if (t.googleSearch || t.googleSearchRetrieval) webSearch = true;
    const builtIn = Object.keys(t).find((k) => !TRANSLATED_TOOLS.has(k) && t[k] !== undefined);
    if (builtIn) refuse(new NativeOnly(`Gemini's built-in tool '${builtIn}' can only be used with Gemini models.`, `tools[${i}].${builtIn}`));
  });

  const fc = body.toolConfig?.functionCallingConfig;
  const allowed = fc?.allowedFunctionNames;
  // Several allowed functions: only they can be called, so only they are offered.
  const offered = allowed && allowed.length > 1 && fc?.mode?.toUpperCase() !== 'NONE' ? tools.filter((t) => allowed.includes(t.name)) : tools;
  for (const k of Object.keys(body.toolConfig ?? {})) if (k !== 'functionCallingConfig') dropped.push(`toolConfig.${k}`);

  const g = body.generationConfig;
  if (g?.candidateCount !== undefined && g.candidateCount > 1) {
    refuse(new NativeOnly('Only Gemini models can generate more than one candidate.', 'generationConfig.candidateCount'));
  }
  if (g?.responseModalities?.some((m) => m.toUpperCase() !== 'TEXT')) dropped.push('generationConfig.responseModalities');
  for (const k of Object.keys(g ?? {})) if (!GENERATION_FIELDS.has(k)) dropped.push(`generationConfig.${k}`);
  const responseFormat = responseFormatOf(g, dropped);

  // Fields this decoder does not read reach only Gemini models; the others name them.
  const fields = droppedFields(body, GEMINI_FIELDS);
  // A context cache's contents are billed as input (at the cached price), their size unknown here.
  if (body.cachedContent !== undefined) seen.opaque.push({ kind: 'stored', what: 'cachedContent' });
  const untranslated = [...fields.untranslated, ...dropped];
  const request: C.Request = {
    model,
    system,
    messages,
    ...(offered.length ? { tools: offered } : {}),
    toolChoice: toolChoiceOf(fc?.mode, allowed),
    maxTokens: g?.maxOutputTokens,
    temperature: g?.temperature,
    topP: g?.topP,
    topK: g?.topK,
    seed: g?.seed,
    frequencyPenalty: g?.frequencyPenalty,
    presencePenalty: g?.presencePenalty,
    stop: g?.stopSequences,
    reasoning: reasoningOf(g?.thinkingConfig),
    responseFormat,
    stream,
    webSearch,
    ...(untranslated.length ? { untranslated } : {}),
    ...(seen.opaque.length ? { opaque: seen.opaque } : {}),
    ...(fields.unknown.length ? { unknownFields: fields.unknown } : {}),
  };
  return { request, nativeOnly };
}

/** The generation request a countTokens body counts: `generateContentRequest`, else its `contents`. */
export const geminiCountTokensInput = (body: GeminiCountTokensRequest): GeminiGenerateContentInput =>
  body.generateContentRequest ?? { contents: body.contents ?? [] };

/**
 * Canonical finish → Gemini's finishReason. Gemini ends a turn of function calls with STOP; a turn
 * that should have called a function and did not is MALFORMED_FUNCTION_CALL (Gemini CLI retries it).
 */
export function geminiFinish(reason: C.FinishReason, hasToolCalls: boolean): string {
  switch (reason) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
    case 'refusal':
      return 'SAFETY';
    case 'tool_calls':
      return hasToolCalls ? 'STOP' : 'MALFORMED_FUNCTION_CALL';
    default:
      return 'STOP';
  }
}

type ModalityCount = NonNullable<Usage['promptTokensDetails']>[number];

/**
 * A total by modality, TEXT being what the audio and image parts leave of it; undefined when
 * neither is above 0 (a split that says only "all text" would claim what the upstream never said).
 */
function byModality(total: number, audio: number | undefined, image: number | undefined): ModalityCount[] | undefined {
  if (!audio && !image) return undefined;
  const text = Math.max(0, total - (audio ?? 0) - (image ?? 0));
  const counts: ModalityCount[] = [{ modality: 'TEXT', tokenCount: text }];
  if (image) counts.push({ modality: 'IMAGE', tokenCount: image });
  if (audio) counts.push({ modality: 'AUDIO', tokenCount: audio });
  return counts;
}

/**
 * Canonical usage → usageMetadata, the inverse of the upstream decoder: the prompt counts all
 * input (cached tokens included, also named apart), thoughts are counted beside the candidates,
 * and the prompt and candidates are split by modality when audio or images were reported. Gemini
 * has no field for cache writes (they stay in the prompt count) or web searches.
 */
export function geminiUsage(u: C.Usage | null): Usage {
  if (!u) return { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 };
  const candidates = Math.max(0, u.outputTokens - u.reasoningTokens);
  const promptDetails = byModality(u.inputTokens, u.audioInputTokens, u.imageInputTokens);
  const candidatesDetails = byModality(candidates, u.audioOutputTokens, u.imageOutputTokens);
  return {
    promptTokenCount: u.inputTokens,
    candidatesTokenCount: candidates,
    totalTokenCount: u.inputTokens + u.outputTokens,
    ...(u.cachedTokens > 0 ? { cachedContentTokenCount: u.cachedTokens } : {}),
    ...(u.reasoningTokens > 0 ? { thoughtsTokenCount: u.reasoningTokens } : {}),
    ...(promptDetails ? { promptTokensDetails: promptDetails } : {}),
    ...(candidatesDetails ? { candidatesTokensDetails: candidatesDetails } : {}),
  };
}

const functionCallPart = (p: C.ToolCallPart): GeminiPart => ({
  functionCall: { id: p.id, name: p.name, args: parseJsonArgs(p.arguments) },
  ...(p.thoughtSignature ? { thoughtSignature: p.thoughtSignature } : {}),
});

/**
 * Answer parts in order. Signatures stay on the part they came on (text, function call, thought);
 * Anthropic's redacted thinking has no Gemini form and is left out.
 */
function answerParts(content: C.Response['content']): GeminiPart[] {
  const parts: GeminiPart[] = [];
  for (const p of content) {
    if (p.type === 'text') {
      if (p.text || p.thoughtSignature) parts.push({ text: p.text, ...(p.thoughtSignature ? { thoughtSignature: p.thoughtSignature } : {}) });
    } else if (p.type === 'reasoning') {
      if (!p.redactedData && (p.text || p.signature)) parts.push({ text: p.text, thought: true, ...(p.signature ? { thoughtSignature: p.signature } : {}) });
    } else parts.push(functionCallPart(p));
  }
  return parts;
}

export function canonicalToGemini(r: C.Response, model: string): GeminiGenerateContentResponse {
  return {
    candidates: [
      {
        content: { parts: answerParts(r.content), role: 'model' },
        finishReason: geminiFinish(r.finishReason, r.content.some((p) => p.type === 'tool_call')),
        index: 0,
      },
    ],
    usageMetadata: geminiUsage(r.usage),
    modelVersion: model,
    responseId: r.id,
  };
}

/** google.rpc.Code names of the HTTP statuses the gateway answers (Google's own mapping). */
const RPC_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  412: 'FAILED_PRECONDITION',
  416: 'OUT_OF_RANGE',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
  524: 'DEADLINE_EXCEEDED',
};

/**
 * An error in Google's shape (google.rpc.Status) with the HTTP status as `code`. `param`, when one
 * field is at fault, is a BadRequest field violation, where Google's clients look for it; `reason`
 * (the gateway's error code, as every other format carries it) an ErrorInfo.
 */
export function geminiErrorBody(status: number, message: string, param?: string | null, reason?: string): GeminiErrorBody {
  const rpc = RPC_STATUS[status] ?? (status < 500 ? 'INVALID_ARGUMENT' : 'UNKNOWN');
  const details = [
    ...(reason ? [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'model-gateway' }] : []),
    ...(param ? [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: param, description: message }] }] : []),
  ];
  return { error: { code: status, message, status: rpc, ...(details.length ? { details } : {}) } };
}

/**
 * The gateway's error in Google's shape: its code as the ErrorInfo reason, its param as a field
 * violation, and a Retry-After (429, 503) as the RetryInfo delay Google's clients wait for.
 */
export function geminiErrorOf(err: GatewayError): GeminiErrorBody {
  const body = geminiErrorBody(err.status, err.message, err.param, err.code);
  const retryAfter = Number(err.headers['retry-after']);
  if (Number.isFinite(retryAfter) && retryAfter >= 0) {
    body.error.details = [...(body.error.details ?? []), { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${Math.ceil(retryAfter)}s` }];
  }
  return body;
}

/** How a Gemini stream is framed: `data: …` events for `?alt=sse` (CRLF, as Google frames them), else its chunks as one JSON array. */
export type GeminiStreamMode = 'sse' | 'json-array';

/** The framing of one stream's chunks, translated or passed through: each chunk's frame, and what closes the stream. */
export class GeminiFraming {
  private opened = false;

  constructor(readonly mode: GeminiStreamMode) {}

  frame(json: string): string {
    if (this.mode === 'sse') return `data: ${json}\r\n\r\n`;
    const out = (this.opened ? ',\r\n' : '[') + json;
    this.opened = true;
    return out;
  }

  /** The array's `]` (an empty array when no chunk was sent); nothing for SSE. */
  close(): string {
    if (this.mode === 'sse') return '';
    return this.opened ? ']' : '[]';
  }
}

/**
 * Canonical stream events → Gemini stream chunks, each a whole GenerateContentResponse: text and
 * thoughts as they come, a function call in one chunk once its arguments are complete, and a last
 * chunk with finishReason and usageMetadata at the end (usage arrives after the finish). `sse` is
 * `?alt=sse` (`data: …` + CRLF CRLF, as Google frames it); `json-array` is one JSON array of chunks.
 */
export class GeminiStreamEncoder {
  private id = '';
  private closed = false;
  private readonly framing: GeminiFraming;
  /** Function calls whose arguments are still streaming, in the order they began. */
  private pending: { index: number; call: C.ToolCallPart }[] = [];
  private calls = 0;
  private finish: C.FinishReason = 'stop';
  private usage: C.Usage | null = null;

  constructor(
    private readonly model: string,
    mode: GeminiStreamMode,
  ) {
    this.framing = new GeminiFraming(mode);
  }

  private frame(data: GeminiGenerateContentResponse | GeminiErrorBody): string {
    return this.framing.frame(JSON.stringify(data));
  }

  private chunk(parts: GeminiPart[], last?: { finishReason: string; usageMetadata: Usage }): string {
    if (!this.id) this.id = `gen-${randomToken(24)}`;
    const candidate = { content: { parts, role: 'model' }, ...(last ? { finishReason: last.finishReason } : {}), index: 0 };
    return this.frame({ candidates: [candidate], ...(last ? { usageMetadata: last.usageMetadata } : {}), modelVersion: this.model, responseId: this.id });
  }

  /** The buffered function calls, each in its own chunk. */
  private flush(): string {
    const out = this.pending.map((p) => this.chunk([functionCallPart(p.call)])).join('');
    this.pending = [];
    return out;
  }

  push(e: C.StreamEvent): string {
    if (this.closed) return '';
    switch (e.type) {
      case 'start':
        this.id ||= e.id;
        return '';
      case 'text':
        return e.text ? this.flush() + this.chunk([{ text: e.text }]) : '';
      case 'reasoning':
        return e.text ? this.flush() + this.chunk([{ text: e.text, thought: true }]) : '';
      case 'reasoning_signature':
        return this.flush() + this.chunk([{ text: '', thought: true, thoughtSignature: e.signature }]);
      case 'text_signature':
        return this.flush() + this.chunk([{ text: '', thoughtSignature: e.signature }]);
      case 'tool_call_start':
        this.calls++;
        this.pending.push({ index: e.index, call: { type: 'tool_call', id: e.id, name: e.name, arguments: '', ...(e.thoughtSignature ? { thoughtSignature: e.thoughtSignature } : {}) } });
        return '';
      case 'tool_call_delta': {
        const p = this.pending.find((c) => c.index === e.index);
        if (p) p.call.arguments += e.arguments;
        return '';
      }
      case 'finish':
        this.finish = e.reason;
        return this.flush();
      case 'usage':
        this.usage = e.usage;
        return '';
      default:
        // Redacted thinking has no Gemini form; citations and web search are not reported.
        return e.type === 'reasoning_redacted' ? this.flush() : '';
    }
  }

  /** The calls still buffered, the last chunk (finish and usage), and the array's end. */
  end(): string {
    if (this.closed) return '';
    this.closed = true;
    const last = { finishReason: geminiFinish(this.finish, this.calls > 0), usageMetadata: geminiUsage(this.usage) };
    // Gemini's own last chunk carries an empty text part.
    return this.flush() + this.chunk([{ text: '' }], last) + this.framing.close();
  }

  /** A failure after the stream began: one error chunk, and the end. */
  fail(err: GatewayError): string {
    if (this.closed) return '';
    this.closed = true;
    return this.frame(geminiErrorOf(err)) + this.framing.close();
  }
}
