// Claude Code's own requests (recorded from Claude Code 2.1.330, test/fixtures/claude-code) sent
// through the Anthropic SDK's beta client, as Claude Code sends them, to every upstream type: a
// system message inside `messages`, adaptive thinking with an effort, context management, deferred
// tools loaded by a tool search (`tool_reference` blocks), 23 tools, and its anthropic-beta list.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDERS, startTextGateway } from '../helpers/text-gateway.ts';

type Json = Record<string, any>;
type Recorded = { url: string; headers: Record<string, string>; body: Json };
const recorded = (name: string): Recorded => JSON.parse(readFileSync(new URL(`../fixtures/claude-code/${name}.json`, import.meta.url), 'utf8'));
const TURNS = ['turn-1', 'turn-2-after-tool-search', 'turn-3-after-tool-result'] as const;

let t: Awaited<ReturnType<typeof startTextGateway>>;
let an: Anthropic;
beforeAll(async () => {
  t = await startTextGateway();
  an = new Anthropic({ baseURL: t.gw.url, apiKey: t.key, maxRetries: 0 });
});
afterAll(() => t?.close());

const lastUpstream = () => t.fake.requests[t.fake.requests.length - 1]!;

/** Sends a recorded request as Claude Code does: the beta client, its betas, `?beta=true`. */
async function send(rec: Recorded, model: string, stream: boolean, patch: Json = {}) {
  const betas = rec.headers['anthropic-beta']!.split(',');
  const params = { ...rec.body, ...patch, model, betas, stream: undefined } as never;
  // Claude Code's version header; a timeout, or the SDK refuses a non-streamed 32,000-token request.
  const options = { headers: { 'anthropic-version': rec.headers['anthropic-version'] }, timeout: 60_000 };
  const { data, response } = stream
    ? await an.beta.messages.stream(params, options).withResponse()
    : await an.beta.messages.create(params, options).withResponse();
  const message = stream ? await (data as unknown as { finalMessage(): Promise<Json> }).finalMessage() : (data as Json);
  return { message, headers: response.headers };
}

const systemPrompt = (rec: Recorded) => (rec.body.system as Json[]).map((b) => b.text).join('\n\n');
/** The tools a model sees: deferred ones only once a tool search loaded them. */
const visibleTools = (rec: Recorded) => {
  const loaded = JSON.stringify(rec.body.messages).match(/"tool_name":\s*"\w+"/g)?.map((m) => m.split('"')[3]) ?? [];
  return (rec.body.tools as Json[]).filter((tool) => !tool.defer_loading || loaded.includes(tool.name)).map((tool) => tool.name);
};

describe.each(PROVIDERS)('Claude Code → %s', (p) => {
  describe.each([false, true])('stream %s', (stream) => {
    it.each(TURNS)('%s is accepted and answered in Claude Code’s format', async (turn) => {
      const rec = recorded(turn);
      const { message, headers } = await send(rec, `${p}-agentic`, stream);
      expect(message.model).toBe(`${p}-agentic`);
      if (turn === 'turn-1') {
        expect(message.stop_reason).toBe('tool_use');
        // Gemini's thought signature rides in an empty signed thinking block before the call.
        const signature = p === 'gemini' ? [{ type: 'thinking', thinking: '', signature: 'EqUCCqICAb4+fakeSignature==' }] : [];
        expect(message.content).toEqual([...signature, { type: 'tool_use', id: expect.any(String), name: 'Read', input: { file_path: '/workspace/proj/README.md' } }]);
      } else {
        expect(message.stop_reason).toBe('end_turn');
        const text = message.content.map((b: Json) => b.text ?? '').join('');
        if (turn === 'turn-3-after-tool-result') expect(text).toContain('# test project');
        else if (p !== 'anthropic') expect(text).toContain('Tool loaded: WebSearch');
      }

      const sent = lastUpstream();
      if (p === 'anthropic') {
        // Passed through: the body as Claude Code wrote it, its betas and version with it.
        expect(sent.body).toEqual({ ...rec.body, model: 'agentic-model', ...(stream ? { stream: true } : { stream: undefined }) });
        expect(sent.headers['anthropic-beta']).toBe(rec.headers['anthropic-beta']);
        expect(sent.headers['anthropic-version']).toBe(rec.headers['anthropic-version']);
        expect(headers.get('x-gateway-warnings')).toBeNull();
        return;
      }
      expect(headers.get('x-gateway-warnings')).toBe(
        "thinking and effort not sent: the model is not known to support reasoning (set supports_reasoning in its config); not supported by this model's provider, dropped: context_management, cache_control",
      );
      const body = sent.body;
      expect(JSON.stringify(body)).not.toContain('context_management');
      expect(JSON.stringify(body)).not.toContain('DeferredToolPlaceholder');
      const toolNames = p === 'gemini' ? body.tools[0].functionDeclarations.map((f: Json) => f.name) : body.tools.map((tool: Json) => tool.function.name);
      expect(toolNames).toEqual(visibleTools(rec).filter((n) => n !== 'DeferredToolPlaceholder'));
      expect(toolNames).toHaveLength(turn === 'turn-1' ? 11 : 22);
      const midSystem = (rec.body.messages[1].content as string | Json[]) ;
      const midText = typeof midSystem === 'string' ? midSystem : midSystem.map((b) => b.text).join('\n\n');
      if (p === 'gemini') {
        expect(body.systemInstruction).toEqual({ parts: [{ text: systemPrompt(rec) }] });
        expect(body.generationConfig).toEqual({ maxOutputTokens: 32000 });
        expect(body.contents.map((c: Json) => c.role)).toEqual(turn === 'turn-1' ? ['user'] : turn === 'turn-2-after-tool-search' ? ['user', 'model', 'user'] : ['user', 'model', 'user', 'model', 'user']);
        // The mid-conversation system message joins the user turn before it, marked.
        expect(body.contents[0].parts.at(-1)).toEqual({ text: `<system>\n${midText}\n</system>` });
        return;
      }
      const roles = body.messages.map((m: Json) => m.role);
      const tail = turn === 'turn-1' ? [] : turn === 'turn-2-after-tool-search' ? ['assistant', 'tool'] : ['assistant', 'tool', 'assistant', 'tool'];
      expect(body.messages[0]).toEqual({ role: 'system', content: systemPrompt(rec) });
      if (p === 'openai') {
        // OpenAI takes system messages anywhere: at its position.
        expect(roles).toEqual(['system', 'user', 'system', ...tail]);
        expect(body.messages[2]).toEqual({ role: 'system', content: midText });
        expect(body.max_completion_tokens).toBe(32000);
      } else {
        expect(roles).toEqual(['system', 'user', ...tail]);
        expect(body.messages[1].content).toContain(`<system>\n${midText}\n</system>`);
        expect(body.max_tokens).toBe(32000);
      }
      expect(body).not.toHaveProperty('reasoning_effort');
      if (turn !== 'turn-1') expect(body.messages.find((m: Json) => m.role === 'tool').content).toContain('Tool loaded: CronCreate\nTool loaded: CronDelete');
    });
  });

  it('adaptive thinking and effort reach a model known to reason; max_tokens is fitted to the model', async () => {
    const rec = recorded('turn-1');
    const { headers } = await send(rec, `${p}-thinker`, false);
    const body = lastUpstream().body;
    if (p === 'anthropic') {
      expect(body).toMatchObject({ thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'high' }, max_tokens: 32000 });
      return;
    }
    expect(headers.get('x-gateway-warnings')).toBe("max_tokens lowered from 32000 to 16384, the model's maximum output; not supported by this model's provider, dropped: context_management, cache_control");
    if (p === 'gemini') expect(body.generationConfig).toEqual({ maxOutputTokens: 16384, thinkingConfig: { thinkingBudget: 16384, includeThoughts: true } });
    else expect(body).toMatchObject({ reasoning_effort: 'high', [p === 'openai' ? 'max_completion_tokens' : 'max_tokens']: 16384 });
  });
});

describe('effort and output format', () => {
  it.each([
    ['low', 'low', 2048],
    ['medium', 'medium', 8192],
    ['xhigh', 'xhigh', 32768],
    ['max', 'xhigh', 32768],
  ])('output_config.effort %s → reasoning_effort %s, thinking budget %d', async (effort, openaiEffort, budget) => {
    const body = { max_tokens: 1000, messages: [{ role: 'user' as const, content: 'Hi' }], thinking: { type: 'adaptive' as const }, output_config: { effort } } as never;
    await an.messages.create({ ...(body as object), model: 'openai-thinker' } as never);
    expect(lastUpstream().body.reasoning_effort).toBe(openaiEffort);
    await an.messages.create({ ...(body as object), model: 'gemini-thinker' } as never);
    expect(lastUpstream().body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: budget, includeThoughts: true });
  });

  it('an explicit thinking budget is sent even to a model not known to reason', async () => {
    await an.messages.create({ model: 'openai-agentic', max_tokens: 9000, messages: [{ role: 'user', content: 'Hi' }], thinking: { type: 'enabled', budget_tokens: 5000 } });
    expect(lastUpstream().body.reasoning_effort).toBe('medium');
  });

  it('thinking disabled sends no reasoning controls, whatever the effort', async () => {
    await an.messages.create({ model: 'gemini-thinker', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }], thinking: { type: 'disabled' }, output_config: { effort: 'high' } });
    expect(lastUpstream().body.generationConfig).toEqual({ maxOutputTokens: 100 });
  });

  const schema = { type: 'object', properties: { answer: { type: 'string' }, confidence: { type: 'number' } }, required: ['answer'], additionalProperties: false };
  it.each(['openai', 'compat', 'gemini'] as const)('output_config.format → structured output on %s, validated', async (p) => {
    const params = { max_tokens: 200, messages: [{ role: 'user' as const, content: 'Answer' }], output_config: { format: { type: 'json_schema' as const, schema } } };
    const r = await an.messages.create({ ...params, model: `${p}-text` });
    expect(JSON.parse((r.content[0] as Anthropic.TextBlock).text)).toEqual({ answer: '42', confidence: 0.9 });
    const sent = lastUpstream().body;
    if (p === 'gemini') expect(sent.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: schema });
    else expect(sent.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema } });
    await expect(an.messages.create({ ...params, model: `${p}-badjson` })).rejects.toMatchObject({ status: 502, error: { type: 'error', error: { code: 'invalid_structured_output', param: 'output_config.format' } } });
  });

  // The SDK of today rewrites `output_format` into `output_config.format` itself; older SDKs and
  // clients of the beta send it as it is.
  const betaMessage = (model: string) =>
    t.gw.fetch('/v1/messages?beta=true', {
      method: 'POST',
      key: t.key,
      headers: { 'anthropic-beta': 'structured-outputs-2025-11-13' },
      json: { model, max_tokens: 200, messages: [{ role: 'user', content: 'Answer' }], output_format: { type: 'json_schema', schema } },
    });
  it.each(['openai', 'compat', 'gemini'] as const)('the beta output_format (the older spelling) → the same structured output on %s, validated', async (p) => {
    const res = await betaMessage(`${p}-text`);
    expect(res.status).toBe(200);
    const r = (await res.json()) as Anthropic.Message;
    expect(JSON.parse((r.content[0] as Anthropic.TextBlock).text)).toEqual({ answer: '42', confidence: 0.9 });
    const sent = lastUpstream().body;
    if (p === 'gemini') expect(sent.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: schema });
    else expect(sent.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema } });
    const bad = await betaMessage(`${p}-badjson`);
    expect(bad.status).toBe(502);
    expect(await bad.json()).toMatchObject({ type: 'error', error: { code: 'invalid_structured_output', param: 'output_format' } });
  });

  it('the beta output_format reaches an Anthropic model as sent, with its beta header', async () => {
    expect((await betaMessage('anthropic-text')).status).toBe(200);
    expect(lastUpstream().body.output_format).toEqual({ type: 'json_schema', schema });
    expect(lastUpstream().headers['anthropic-beta']).toBe('structured-outputs-2025-11-13');
  });

  it('chat reasoning_effort reaches Claude 4.7 as adaptive thinking with an effort, older Claude as a budget', async () => {
    const oa = new OpenAI({ baseURL: `${t.gw.url}/v1`, apiKey: t.key, maxRetries: 0 });
    await oa.chat.completions.create({ model: 'claude-opus-4-7', messages: [{ role: 'user', content: 'Hi' }], reasoning_effort: 'high', max_tokens: 1000 });
    expect(lastUpstream().body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' }, max_tokens: 1000 });
    await oa.chat.completions.create({ model: 'claude-opus-4-7', messages: [{ role: 'user', content: 'Hi' }], reasoning_effort: 'minimal', max_tokens: 1000 });
    expect(lastUpstream().body.output_config).toEqual({ effort: 'low' });
    await oa.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }], reasoning_effort: 'high', max_tokens: 1000 });
    expect(lastUpstream().body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 16384 }, max_tokens: 17384 });
    expect(lastUpstream().body).not.toHaveProperty('output_config');
  });
});

describe('answers carry the model id the client sent', () => {
  // The fake upstreams answer with their own model names (`text-model`, a dated snapshot for OpenAI's fixture).
  it.each(PROVIDERS)('chat completions → %s, stream and not', async (p) => {
    const oa = new OpenAI({ baseURL: `${t.gw.url}/v1`, apiKey: t.key, maxRetries: 0 });
    const r = await oa.chat.completions.create({ model: `${p}-text`, messages: [{ role: 'user', content: 'Hi' }] });
    expect(r.model).toBe(`${p}-text`);
    const chunks: string[] = [];
    for await (const c of await oa.chat.completions.create({ model: `${p}-text`, messages: [{ role: 'user', content: 'Hi' }], stream: true })) chunks.push(c.model);
    expect(new Set(chunks)).toEqual(new Set([`${p}-text`]));
  });

  it.each(PROVIDERS)('Messages → %s, stream and not', async (p) => {
    const r = await an.messages.create({ model: `${p}-text`, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    expect(r.model).toBe(`${p}-text`);
    const s = await an.messages.stream({ model: `${p}-text`, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
    expect(s.model).toBe(`${p}-text`);
  });

  it('Responses passed through to OpenAI, stream and not', async () => {
    const oa = new OpenAI({ baseURL: `${t.gw.url}/v1`, apiKey: t.key, maxRetries: 0 });
    const r = await oa.responses.create({ model: 'openai-text', input: 'Hi' });
    expect(r.model).toBe('openai-text');
    const s = await oa.responses.stream({ model: 'openai-text', input: 'Hi' }).finalResponse();
    expect(s.model).toBe('openai-text');
  });
});

describe('Messages errors in Anthropic’s envelope', () => {
  it('a 400 carries "type": "error" and the Anthropic SDK reads its type and message', async () => {
    const res = await t.gw.fetch('/v1/messages', { method: 'POST', key: t.key, json: { model: 'openai-text', max_tokens: 5, messages: [{ role: 'robot', content: 'x' }] } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', code: 'invalid_parameter', param: 'messages[0].role', message: expect.stringContaining("Invalid 'messages[0].role'") },
    });
    const err = await an.messages.create({ model: 'nope', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err).toMatchObject({ status: 400, type: 'invalid_request_error', apiMessage: "The model 'nope' does not exist or is not served by this gateway: GET /v1/models lists the models it serves." });
  });

  it('authentication failures too, and only on /v1/messages', async () => {
    const bad = new Anthropic({ baseURL: t.gw.url, apiKey: 'mg-wrong', maxRetries: 0 });
    const err = await bad.messages.create({ model: 'openai-text', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'invalid_api_key' } });
    const chat = await t.gw.fetch('/v1/chat/completions', { method: 'POST', key: 'mg-wrong', json: { model: 'openai-text', messages: [] } });
    expect(await chat.json()).not.toHaveProperty('type');
  });

  it('blocks only Anthropic can take pass through to it and are a 400 naming the block elsewhere', async () => {
    const messages = [{ role: 'user' as const, content: [{ type: 'search_result', source: 'https://example.com', title: 'T', content: [{ type: 'text', text: 'x' }] }, { type: 'text', text: 'Hi' }] }];
    const ok = await an.messages.create({ model: 'anthropic-text', max_tokens: 50, messages } as never);
    expect(ok.type).toBe('message');
    expect(lastUpstream().body.messages).toEqual(messages);
    const err = await an.messages.create({ model: 'openai-text', max_tokens: 50, messages } as never).catch((e) => e);
    expect(err).toMatchObject({ status: 400, error: { error: { param: 'messages[0].content[0].type', message: "Content blocks of type 'search_result' can only be sent to Anthropic models." } } });
  });
});
