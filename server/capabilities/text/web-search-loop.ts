// Web search run by the gateway for upstreams without a native one: the model gets a `web_search`
// function; each call is answered from the configured backend with numbered results, for a bounded
// number of rounds; `[n]` markers in the answer become url_citation annotations.
import type { CapabilityDeps } from '../deps.ts';
import { postJson } from '../../upstream/http.ts';
import { buildCall, type CallContext } from '../../providers/types.ts';
import type { TextTarget as Target } from '../../pipeline/types.ts';
import { SearchError, type SearchResult } from '../../search/backends.ts';
import type * as C from '../../translate/canonical.ts';
import { addUsage } from '../../translate/usage.ts';

export const SEARCH_TOOL = 'web_search';
const INSTRUCTION = 'You can search the web with the web_search tool. Cite the numbered search results you rely on as [n] right after the statement they support.';

function cite(content: C.Response['content'], sources: SearchResult[]): C.Response['content'] {
  return content.map((p) => {
    if (p.type !== 'text') return p;
    const annotations: C.UrlCitation[] = [];
    for (const m of p.text.matchAll(/\[(\d{1,3})\]/g)) {
      const src = sources[Number(m[1]) - 1];
      if (src) annotations.push({ url: src.url, title: src.title, start: m.index!, end: m.index! + m[0].length });
    }
    return annotations.length ? { ...p, annotations } : p;
  });
}

export async function gatewaySearchLoop(services: CapabilityDeps, target: Target, request: C.Request, ctx: CallContext): Promise<C.Response> {
  const backend = services.search!;
  const cfg = services.config.webSearch!;
  const tool: C.Tool = {
    name: SEARCH_TOOL,
    description: 'Search the web for current information. Returns numbered results with title, URL and snippet.',
    parameters: { type: 'object', properties: { query: { type: 'string', description: 'The search query' } }, required: ['query'] },
  };
  let req: C.Request = { ...request, model: target.upstreamModel, stream: false, system: [...request.system, INSTRUCTION], tools: [...(request.tools ?? []), tool] };
  const sources: SearchResult[] = [];
  let usage: C.Usage | null = null;
  for (let round = 0; ; round++) {
    const { json } = await postJson(buildCall(target.adapter, req, ctx));
    const r = target.adapter.decode(json, ctx);
    usage = addUsage(usage, r.usage);
    const calls = r.content.filter((p): p is C.ToolCallPart => p.type === 'tool_call');
    const searches = calls.filter((c) => c.name === SEARCH_TOOL);
    if (!searches.length || searches.length < calls.length) {
      // Done searching (or the model called the client's own tools, which the client runs).
      return { ...r, content: cite(r.content.filter((p) => p.type !== 'tool_call' || p.name !== SEARCH_TOOL), sources), usage, webSearch: sources.length > 0 || round > 0 };
    }
    const results: C.Part[] = [];
    for (const call of searches) {
      let text: string;
      try {
        const query = String(JSON.parse(call.arguments || '{}').query ?? '');
        const found = await backend.search(query, cfg.max_results);
        text = JSON.stringify(found.map((f) => ({ n: sources.push(f), title: f.title, url: f.url, snippet: f.snippet })));
      } catch (err) {
        // What the model reads may reach the user: the backend's own refusal, never a socket error's address.
        text = `Search failed: ${err instanceof SearchError ? err.message : err instanceof SyntaxError ? 'the search arguments were not valid JSON' : 'the search backend could not be reached'}`;
      }
      results.push({ type: 'tool_result', toolCallId: call.id, name: SEARCH_TOOL, content: [{ type: 'text', text }] });
    }
    const last = round + 1 >= cfg.max_rounds;
    req = {
      ...req,
      messages: [...req.messages, { role: 'assistant', content: r.content }, { role: 'user', content: results }],
      // Out of rounds: the next answer must be text.
      ...(last ? { toolChoice: 'none' as const } : {}),
    };
  }
}
