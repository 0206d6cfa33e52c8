// OpenAI Responses wire format: used only to pass Responses requests through to OpenAI itself,
// reading usage and output on the way for billing and structured-output checks.
import { randomToken } from '../../runtime/secrets.ts';
import * as C from '../../translate/canonical.ts';
import { type StreamDecoder, type TextAdapter } from '../types.ts';
import { UpstreamStreamError } from '../../upstream/errors.ts';
import { vendorTarget } from '../vendor-client.ts';
import { openaiClient } from './client.ts';
import { asWire } from '../../upstream/json.ts';
import { clampUsage, whole } from '../../translate/usage.ts';
import type * as W from './wire.ts';

/**
 * The Responses API's usage: cached and written tokens are parts of `input_tokens`, reasoning of
 * `output_tokens`. Web searches are not in it: OpenAI bills each `web_search_call` output item,
 * so the caller counts them (set only when there was one).
 */
export function decodeResponsesUsage(u: W.ResponsesUsage | null | undefined, webSearchCalls = 0): C.Usage | null {
  if (!u) return null;
  return clampUsage({
    inputTokens: whole(u.input_tokens),
    outputTokens: whole(u.output_tokens),
    cachedTokens: whole(u.input_tokens_details?.cached_tokens),
    cacheWriteTokens: whole(u.input_tokens_details?.cache_write_tokens),
    reasoningTokens: whole(u.output_tokens_details?.reasoning_tokens),
    ...(webSearchCalls > 0 ? { webSearchCalls } : {}),
  });
}

const searchCallsIn = (output: W.ResponsesOutputItem[] | undefined) => (output ?? []).filter((item) => item.type === 'web_search_call').length;

function finishOf(r: W.ResponseObject, hasCalls: boolean): C.FinishReason {
  const reason = r.incomplete_details?.reason;
  if (r.status === 'incomplete') return reason === 'content_filter' ? 'content_filter' : 'length';
  return hasCalls ? 'tool_calls' : 'stop';
}

export function decodeResponseObject(r: W.ResponseObject): C.Response {
  const content: C.Response['content'] = [];
  let webSearch = false;
  for (const item of r.output ?? []) {
    if (item.type === 'message') {
      // Other content types are skipped (the wire type names only these two).
      for (const c of item.content ?? []) if (c.type === 'output_text' || c.type === 'refusal') content.push({ type: 'text', text: c.type === 'output_text' ? c.text : c.refusal });
    } else if (item.type === 'function_call') content.push({ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.arguments });
    else if (item.type === 'reasoning') content.push({ type: 'reasoning', text: (item.summary ?? []).map((s) => s.text).join('') });
    else if (item.type === 'web_search_call') webSearch = true;
  }
  return {
    id: r.id ?? `resp_${randomToken(24)}`,
    model: r.model ?? '',
    content,
    finishReason: finishOf(r, content.some((p) => p.type === 'tool_call')),
    usage: decodeResponsesUsage(r.usage, searchCallsIn(r.output)),
    webSearch,
  };
}

export class ResponsesStreamDecoder implements StreamDecoder {
  private finished = false;
  private sawCalls = false;
  /** web_search_call items streamed, for a final response that does not repeat its output. */
  private searches = 0;

  push(e: { data: string }): C.StreamEvent[] {
    return this.pushParsed(JSON.parse(e.data));
  }

  pushParsed(data: unknown): C.StreamEvent[] {
    const ev = asWire<W.ResponsesStreamEvent>(data);
    switch (ev.type) {
      case 'response.created':
        return [{ type: 'start', id: ev.response?.id ?? `resp_${randomToken(24)}`, model: ev.response?.model ?? '' }];
      case 'response.output_item.added':
        if (ev.item?.type === 'function_call') {
          this.sawCalls = true;
          return [{ type: 'tool_call_start', index: ev.output_index, id: ev.item.call_id, name: ev.item.name }];
        }
        if (ev.item?.type !== 'web_search_call') return [];
        this.searches++;
        return [{ type: 'web_search' }];
      case 'response.function_call_arguments.delta':
        return [{ type: 'tool_call_delta', index: ev.output_index, arguments: ev.delta }];
      case 'response.output_text.delta':
        return [{ type: 'text', text: ev.delta }];
      case 'response.reasoning_summary_text.delta':
        return [{ type: 'reasoning', text: ev.delta }];
      case 'response.completed':
      case 'response.incomplete': {
        this.finished = true;
        const usage = decodeResponsesUsage(ev.response?.usage, this.searchCalls(ev.response));
        const out: C.StreamEvent[] = [{ type: 'finish', reason: finishOf(ev.response ?? {}, this.sawCalls) }];
        if (usage) out.push({ type: 'usage', usage });
        return out;
      }
      case 'response.failed': {
        this.finished = true;
        const usage = decodeResponsesUsage(ev.response?.usage, this.searchCalls(ev.response));
        const err = ev.response?.error ?? {};
        const out: C.StreamEvent[] = [{ type: 'failed', message: err.message ?? 'the response failed', code: err.code }];
        if (usage) out.push({ type: 'usage', usage });
        return out;
      }
      case 'error':
        return [{ type: 'failed', message: ev.message ?? ev.error?.message ?? 'upstream error', code: ev.code ?? ev.error?.code }];
      default:
        return [];
    }
  }

  /** The final response's web_search_call items, else the ones the stream announced. */
  private searchCalls(r: W.ResponseObject | undefined): number {
    return r?.output?.length ? searchCallsIn(r.output) : this.searches;
  }

  end(): C.StreamEvent[] {
    if (!this.finished) throw new UpstreamStreamError('the upstream stream ended before response.completed');
    return [];
  }
}

export const openAiResponses: TextAdapter = {
  format: 'openai-responses',
  nativeWebSearch: true,
  endpoint: (_req, ctx) => vendorTarget(openaiClient, ctx.provider, '/responses'),
  // Responses upstreams are only ever passed through: the body is the client's own.
  body: (req) => ({ model: req.model }),
  decode: (body) => decodeResponseObject(asWire<W.ResponseObject>(body)),
  streamDecoder: () => new ResponsesStreamDecoder(),
};
