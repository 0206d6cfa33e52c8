// Gemini's wire, as the gateway reads and writes it: generateContent answers (text, images and
// speech all come this way), batch embeddings, Veo's long-running operation, and the
// generateContent request the encoder builds. Fields are optional where Gemini may leave them out.
// Types only; test/mappings/wire-schemas.ts holds the same shapes as zod schemas, checked against
// the recorded answers in test/fixtures/recorded/upstreams/.

/** A count for one modality: TEXT, IMAGE, VIDEO, AUDIO or DOCUMENT. */
export type ModalityTokenCount = { modality?: string; tokenCount?: number };

/**
 * `promptTokenCount` includes the cached tokens; the tool-use prompt (what a built-in tool such as
 * Search or Maps added) and the thoughts are counted beside the prompt and the candidates:
 * total = prompt + toolUsePrompt + candidates + thoughts. Each `…Details` list splits its count by modality.
 */
export type UsageMetadata = {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  cachedContentTokenCount?: number;
  totalTokenCount?: number;
  promptTokensDetails?: ModalityTokenCount[];
  toolUsePromptTokensDetails?: ModalityTokenCount[];
  cacheTokensDetails?: ModalityTokenCount[];
  candidatesTokensDetails?: ModalityTokenCount[];
};

export type InlineData = { mimeType?: string; data?: string };

export type Part = {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  inlineData?: InlineData;
};

export type Candidate = { content?: { role?: 'model'; parts?: Part[] }; finishReason?: string; finishMessage?: string };

export type GenerateContentResponse = {
  candidates?: Candidate[];
  promptFeedback?: { blockReason?: string; blockReasonMessage?: string };
  usageMetadata?: UsageMetadata;
  modelVersion?: string;
  responseId?: string;
  /** An error chunk in a stream (google.rpc.Status). */
  error?: { code?: number; message?: string; status?: string };
};

/** `:batchEmbedContents`. */
export type BatchEmbeddings = { embeddings?: { values: number[] }[] };

/** A Veo video: a file URI, or the bytes inline (field names differ between API versions). */
export type VeoVideo = { uri?: string; encodedVideo?: string; bytesBase64Encoded?: string; encoding?: string; mimeType?: string };

/** `generatedSamples` wrap each video in `video`; `videos` list them bare. */
export type VeoSample = VeoVideo & { video?: VeoVideo };

export type VeoVideos = {
  generatedSamples?: VeoSample[];
  videos?: VeoSample[];
  raiMediaFilteredCount?: number;
  raiMediaFilteredReasons?: string[];
};

/** `:predictLongRunning` and `GET /{name}`: a long-running operation (google.longrunning.Operation). */
export type Operation = {
  name?: string;
  done?: boolean;
  error?: { code?: number | string; message?: string };
  response?: VeoVideos & { generateVideoResponse?: VeoVideos };
};

// ---- the requests the encoders build ------------------------------------------------------------

export type VeoImage = { bytesBase64Encoded: string; mimeType: string };

/** `:predictLongRunning`'s body is `{ instances: [VeoInstance], parameters: VeoParameters }`. */
export type VeoInstance = { prompt: string; image?: VeoImage; referenceImages?: { image: VeoImage; referenceType: 'asset' }[] };

export type VeoParameters = { durationSeconds: number; sampleCount: number; aspectRatio?: string; resolution?: string; negativePrompt?: string };

export type RequestPart =
  | { text: string; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | { functionCall: { name: string; args: unknown }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

export type Content = { role: 'user' | 'model'; parts: RequestPart[] };

export type GenerationConfig = {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  stopSequences?: string[];
  responseMimeType?: string;
  responseJsonSchema?: unknown;
  thinkingConfig?: { thinkingBudget: number; includeThoughts?: boolean };
  responseModalities?: ('TEXT' | 'IMAGE' | 'AUDIO')[];
  imageConfig?: { aspectRatio?: string; imageSize?: string };
  speechConfig?: { voiceConfig: { prebuiltVoiceConfig: { voiceName: string } } };
};

export type GenerateContentRequest = {
  contents: Content[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations: { name: string; description?: string; parametersJsonSchema: unknown }[] }[];
  toolConfig?: { functionCallingConfig: { mode: string; allowedFunctionNames?: string[] } };
  generationConfig?: GenerationConfig;
};

/** The answer of `models/{model}:countTokens`. */
export type CountTokensResponse = { totalTokens?: number; cachedContentTokenCount?: number };
