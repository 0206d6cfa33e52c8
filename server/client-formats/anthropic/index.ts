// Anthropic's Messages API as a client format: its error bodies carry `"type": "error"` at the top,
// its clients send the key as `x-api-key` and `anthropic-version` with every request, and read the
// catalog in the shape of Anthropic's Models API.
import { anthropicModelById, anthropicModelList } from './catalog.ts';
import { headerValue, type ClientFormatSpec } from '../spec.ts';

export const anthropicClientFormat: ClientFormatSpec = {
  name: 'anthropic',
  envelope: 'anthropic',
  errorBody: (gw) => ({ type: 'error', ...gw.toBody() }),
  credential: {
    scheme: 'bearer-or-x-api-key',
    headers: ['x-api-key'],
    read: (headers) => headerValue(headers['x-api-key']),
    missing: 'Missing API key. Send it as `x-api-key: <API_KEY>` or `Authorization: Bearer <API_KEY>`.',
  },
  marker: 'anthropic-version',
  catalog: { list: anthropicModelList, get: anthropicModelById },
};
