// Google's Gemini API as a client format (`/v1beta/models/{model}:generateContent`, `:streamGenerateContent`,
// `:countTokens`, the model list), so the @google/genai SDKs and Gemini CLI reach every model. Objects are
// loose: Google's clients send fields this contract does not describe, and a Gemini upstream gets them as sent.
// The model is in the path; enums are read without regard to case, as Google's documentation spells them both ways.
import { z } from 'zod';
import { JsonSchemaObject } from './common.ts';

/** A value of one of `values`, in any case (`"ANY"`, `"any"`). */
const caseless = (values: readonly string[]) =>
  z.string().refine((v) => values.includes(v.toUpperCase()), { message: `must be one of ${values.join(', ')}` });

const Blob = z.looseObject({ mimeType: z.string(), data: z.string().describe('Base64.') });

export const GeminiPart = z
  .looseObject({
    text: z.string().optional(),
    thought: z.boolean().optional().describe('The part is a thought summary (reasoning), not answer text.'),
    thoughtSignature: z.string().optional().describe('Opaque reasoning state, handed back on the part it came on.'),
    inlineData: Blob.optional(),
    fileData: z.looseObject({ mimeType: z.string().optional(), fileUri: z.string() }).optional(),
    functionCall: z.looseObject({ id: z.string().optional(), name: z.string(), args: z.record(z.string(), z.unknown()).optional() }).optional(),
    functionResponse: z
      .looseObject({
        id: z.string().optional(),
        name: z.string(),
        response: z.record(z.string(), z.unknown()).optional(),
        parts: z.array(z.looseObject({ inlineData: Blob.optional() })).optional(),
      })
      .optional(),
    executableCode: z.looseObject({}).optional(),
    codeExecutionResult: z.looseObject({}).optional(),
  })
  .meta({
    id: 'GeminiPart',
    description:
      'One part of a turn: text (a thought when `thought` is true), inline data, a file URI, a function call or a function response. ' +
      'For models other than Gemini: images (PNG, JPEG, GIF, WebP, inline or an http(s) URL) are translated; other media, Gemini file URIs and code execution parts reach Gemini models only.',
  });
export type GeminiPart = z.infer<typeof GeminiPart>;

export const GeminiContent = z
  .looseObject({
    role: z.enum(['user', 'model', 'function']).optional().describe('`model` is the assistant; `user` (the default) and `function` carry the client’s turns and function responses.'),
    parts: z.array(GeminiPart),
  })
  .meta({ id: 'GeminiContent' });
export type GeminiContent = z.infer<typeof GeminiContent>;

export const GeminiFunctionDeclaration = z
  .looseObject({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: JsonSchemaObject.optional().describe('OpenAPI-subset schema (`"type": "OBJECT"`, `nullable`); converted to JSON Schema for other models.'),
    parametersJsonSchema: JsonSchemaObject.optional().describe('JSON Schema; used as is, and preferred over `parameters`.'),
  })
  .meta({ id: 'GeminiFunctionDeclaration' });

export const GeminiTool = z
  .looseObject({
    functionDeclarations: z.array(GeminiFunctionDeclaration).optional(),
    googleSearch: z.looseObject({}).optional(),
    googleSearchRetrieval: z.looseObject({}).optional(),
    codeExecution: z.looseObject({}).optional(),
    urlContext: z.looseObject({}).optional(),
  })
  .meta({
    id: 'GeminiTool',
    description: '`googleSearch` is web search for every model; code execution, URL context and Google’s other built-in tools run on Gemini models only.',
  });

export const GeminiFunctionCallingMode = caseless(['MODE_UNSPECIFIED', 'AUTO', 'ANY', 'NONE', 'VALIDATED']).meta({
  id: 'GeminiFunctionCallingMode',
  description: 'AUTO, ANY (a function must be called), NONE or VALIDATED, in any case. For other models: auto, required (the one function when one is allowed), none, auto.',
});

export const GeminiToolConfig = z
  .looseObject({
    functionCallingConfig: z
      .looseObject({ mode: GeminiFunctionCallingMode.optional(), allowedFunctionNames: z.array(z.string()).optional() })
      .optional(),
  })
  .meta({ id: 'GeminiToolConfig' });

export const GeminiThinkingLevel = caseless(['THINKING_LEVEL_UNSPECIFIED', 'MINIMAL', 'LOW', 'MEDIUM', 'HIGH']).meta({
  id: 'GeminiThinkingLevel',
  description: 'MINIMAL, LOW, MEDIUM or HIGH, in any case: the reasoning effort of the same name for other models.',
});

export const GeminiGenerationConfig = z
  .looseObject({
    temperature: z.number().min(0).max(2).optional(),
    topP: z.number().min(0).max(1).optional(),
    topK: z.number().min(0).optional(),
    maxOutputTokens: z.number().int().min(1).optional(),
    stopSequences: z.array(z.string()).optional(),
    candidateCount: z.number().int().min(1).optional().describe('More than 1 only for Gemini models.'),
    seed: z.number().int().optional(),
    presencePenalty: z.number().optional(),
    frequencyPenalty: z.number().optional(),
    responseMimeType: z.string().optional(),
    responseSchema: JsonSchemaObject.optional().describe('OpenAPI-subset schema, with `responseMimeType: application/json`.'),
    responseJsonSchema: JsonSchemaObject.optional().describe('JSON Schema, with `responseMimeType: application/json`; preferred over `responseSchema`.'),
    thinkingConfig: z
      .looseObject({
        thinkingBudget: z.number().int().min(-1).optional().describe('0 turns thinking off, -1 lets the model decide.'),
        includeThoughts: z.boolean().optional(),
        thinkingLevel: GeminiThinkingLevel.optional(),
      })
      .optional(),
    responseModalities: z.array(z.string()).optional(),
  })
  .meta({ id: 'GeminiGenerationConfig' });

export const GeminiGenerateContentRequest = z
  .looseObject({
    model: z.string().optional().describe('Ignored: the model is the one in the path.'),
    contents: z.array(GeminiContent).min(1),
    systemInstruction: z.union([z.string(), GeminiContent]).optional().describe('Text parts; the SDKs send a Content, a bare string is taken too.'),
    tools: z.array(GeminiTool).optional(),
    toolConfig: GeminiToolConfig.optional(),
    generationConfig: GeminiGenerationConfig.optional(),
    safetySettings: z.array(z.looseObject({ category: z.string(), threshold: z.string() })).optional(),
    cachedContent: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
  })
  .meta({
    id: 'GeminiGenerateContentRequest',
    description:
      'Gemini-format request. For Gemini models it is passed on as sent; for the others, what cannot be translated ' +
      '(`safetySettings`, `cachedContent`, `labels`, non-text `responseModalities`, …) is dropped and named in the `X-Gateway-Warnings` response header.',
  });
export type GeminiGenerateContentRequest = z.infer<typeof GeminiGenerateContentRequest>;
/** What the Gemini decoder reads: a generation's body (the countTokens body's `generateContentRequest` included). */
export type GeminiGenerateContentInput = GeminiGenerateContentRequest;

export const GeminiFinishReason = z.string().meta({
  id: 'GeminiFinishReason',
  description: 'STOP (function calls included), MAX_TOKENS, SAFETY, MALFORMED_FUNCTION_CALL; Gemini models may also answer RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, OTHER, ….',
});

export const GeminiModalityTokenCount = z.looseObject({ modality: z.string().describe('TEXT, IMAGE, VIDEO, AUDIO or DOCUMENT.'), tokenCount: z.number().int() }).meta({ id: 'GeminiModalityTokenCount' });

export const GeminiUsageMetadata = z
  .looseObject({
    promptTokenCount: z.number().int().optional().describe('All input tokens, cached ones included.'),
    candidatesTokenCount: z.number().int().optional().describe('Output tokens, thoughts excluded.'),
    totalTokenCount: z.number().int().optional(),
    cachedContentTokenCount: z.number().int().optional(),
    thoughtsTokenCount: z.number().int().optional(),
    toolUsePromptTokenCount: z.number().int().optional(),
    promptTokensDetails: z.array(GeminiModalityTokenCount).optional().describe('The prompt by modality, when the provider reported audio or image input.'),
    candidatesTokensDetails: z.array(GeminiModalityTokenCount).optional().describe('The candidates by modality, when the provider reported audio or image output.'),
  })
  .meta({ id: 'GeminiUsageMetadata' });

export const GeminiCandidate = z
  .looseObject({
    content: z.looseObject({ role: z.string().optional(), parts: z.array(GeminiPart).optional() }).optional(),
    finishReason: GeminiFinishReason.optional(),
    index: z.number().int().optional(),
  })
  .meta({ id: 'GeminiCandidate' });

export const GeminiGenerateContentResponse = z
  .looseObject({
    candidates: z.array(GeminiCandidate).optional(),
    usageMetadata: GeminiUsageMetadata.optional(),
    modelVersion: z.string().optional(),
    responseId: z.string().optional(),
    promptFeedback: z.looseObject({ blockReason: z.string().optional() }).optional(),
  })
  .meta({
    id: 'GeminiGenerateContentResponse',
    description:
      'A generateContent answer, and each chunk of a stream: `?alt=sse` sends `data: <chunk>` events, without it one JSON array of chunks. ' +
      'Text streams as it comes; a function call arrives whole in one chunk; the last chunk carries `finishReason` and `usageMetadata`.',
  });
export type GeminiGenerateContentResponse = z.infer<typeof GeminiGenerateContentResponse>;

export const GeminiCountTokensRequest = z
  .looseObject({
    contents: z.array(GeminiContent).optional(),
    generateContentRequest: GeminiGenerateContentRequest.optional().describe('A whole generation request: its system instruction and tools count too.'),
  })
  .refine((b) => b.contents !== undefined || b.generateContentRequest !== undefined, { message: 'contents or generateContentRequest is required' })
  .meta({ id: 'GeminiCountTokensRequest' });
export type GeminiCountTokensRequest = z.infer<typeof GeminiCountTokensRequest>;

export const GeminiCountTokensResponse = z
  .looseObject({ totalTokens: z.number().int().nonnegative(), cachedContentTokenCount: z.number().int().nonnegative().optional() })
  .meta({ id: 'GeminiCountTokensResponse' });
export type GeminiCountTokensResponse = z.infer<typeof GeminiCountTokensResponse>;

export const GeminiModel = z
  .looseObject({
    name: z.string().describe('`models/{id}`.'),
    baseModelId: z.string().optional(),
    version: z.string(),
    displayName: z.string(),
    description: z.string().optional(),
    inputTokenLimit: z.number().int().optional().describe('Absent when the catalog does not know it.'),
    outputTokenLimit: z.number().int().optional().describe('Absent when the catalog does not know it.'),
    supportedGenerationMethods: z.array(z.string()).describe('`generateContent`, `streamGenerateContent`, `countTokens`, …'),
    temperature: z.number().optional(),
    maxTemperature: z.number().optional(),
    topP: z.number().optional(),
    topK: z.number().int().optional(),
    thinking: z.boolean().optional(),
  })
  .meta({ id: 'GeminiModel', description: 'A model in Google’s shape (`GET /v1beta/models`).' });
export type GeminiModel = z.infer<typeof GeminiModel>;

export const GeminiModelList = z
  .looseObject({ models: z.array(GeminiModel), nextPageToken: z.string().optional() })
  .meta({ id: 'GeminiModelList' });
export type GeminiModelList = z.infer<typeof GeminiModelList>;

export const GeminiErrorBody = z
  .looseObject({
    error: z.looseObject({
      code: z.number().int().describe('The HTTP status.'),
      message: z.string(),
      status: z.string().describe('The google.rpc.Code name: INVALID_ARGUMENT, UNAUTHENTICATED, RESOURCE_EXHAUSTED, ….'),
      details: z.array(z.unknown()).optional(),
    }),
  })
  .meta({
    id: 'GeminiErrorBody',
    description: 'Error body of the Gemini-format routes (google.rpc.Status), as Google’s SDKs read it; a stream that fails after it began ends with one chunk of this shape.',
  });
export type GeminiErrorBody = z.infer<typeof GeminiErrorBody>;
