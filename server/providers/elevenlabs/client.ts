// The ElevenLabs API: `xi-api-key`; its errors are `{"detail": {"status", "message"}}` (or a string).
import type { VendorClient } from '../vendor-client.ts';
import { upstreamErrorMessage } from '../../upstream/errors.ts';

export const elevenlabsClient: VendorClient = {
  baseUrl: (p) => p.base_url ?? 'https://api.elevenlabs.io/v1',
  auth: (key) => ({ 'xi-api-key': key }),
  needsApiKey: () => true,
  credentialHeaders: ['xi-api-key'],
  errorMessage(text) {
    try {
      const detail = (JSON.parse(text) as { detail?: unknown }).detail;
      if (typeof detail === 'string') return detail;
      const d = detail as { message?: unknown; status?: unknown } | undefined;
      if (d && typeof d.message === 'string') return typeof d.status === 'string' ? `${d.message} (${d.status})` : d.message;
    } catch {
      // not JSON: the shared reading shows its start
    }
    return upstreamErrorMessage(text);
  },
};
