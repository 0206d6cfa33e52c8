// Forwarded headers (X-Forwarded-Host/Proto/For) are believed only from configured proxies, and
// `public_url`, when set, names the issuer, `iss` and sign-in callbacks whatever the headers say.
import { afterEach, describe, expect, it } from 'vitest';
import { minimalConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const provider = `auth:
  providers:
    - { id: corp, type: oauth2, name: Corp, authorization_endpoint: "https://idp.example/authorize", token_endpoint: "https://idp.example/token", userinfo_endpoint: "https://idp.example/userinfo", client_id: gw }
`;
const forwarded = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

/** The three places the gateway names itself, as seen by a request with `headers`. */
async function selfNames(g: TestGateway, headers: Record<string, string>) {
  const issuer = ((await (await g.fetch('/.well-known/oauth-authorization-server', { headers })).json()) as any).issuer;
  const key = await g.newKey();
  const app: any = await (await g.fetch('/v1/apps', { method: 'POST', key, json: { name: 'A', redirect_uris: ['https://a.example/cb'] } })).json();
  const bounced = await g.fetch(`/v1/oauth/authorize?client_id=${app.client_id}&redirect_uri=${encodeURIComponent('https://a.example/cb')}&response_type=token&scope=identity`, { headers, redirect: 'manual' });
  const iss = new URL(bounced.headers.get('location')!).searchParams.get('iss');
  const start = await g.fetch('/signin/corp', { headers, redirect: 'manual' });
  const callback = new URL(start.headers.get('location')!).searchParams.get('redirect_uri');
  return { issuer, iss, callback, cookie: start.headers.get('set-cookie') ?? '' };
}

describe('forwarded headers', () => {
  it('are ignored by default: X-Forwarded-Host cannot change the issuer, iss or IdP callback URLs', async () => {
    gw = await startTestGateway({ config: minimalConfig + provider });
    const names = await selfNames(gw, forwarded);
    expect(names).toMatchObject({ issuer: gw.url, iss: gw.url, callback: `${gw.url}/signin/corp/callback` });
    expect(names.cookie).not.toMatch(/Secure/i);
  });

  it('are ignored from an address outside trust_proxy', async () => {
    gw = await startTestGateway({ config: minimalConfig + provider + 'trust_proxy: ["10.0.0.0/8"]\n' });
    expect((await selfNames(gw, forwarded)).issuer).toBe(gw.url);
  });

  it('are believed from a trusted proxy (trust_proxy, or TRUST_PROXY in the environment); the cookie is Secure behind HTTPS', async () => {
    gw = await startTestGateway({ config: minimalConfig + provider + 'trust_proxy: ["127.0.0.1/32"]\n' });
    expect(await selfNames(gw, forwarded)).toMatchObject({ issuer: 'https://evil.example', iss: 'https://evil.example', callback: 'https://evil.example/signin/corp/callback', cookie: expect.stringMatching(/Secure/i) });
    await gw.close();
    gw = await startTestGateway({ config: minimalConfig + provider, env: { TRUST_PROXY: '1' } });
    expect((await selfNames(gw, forwarded)).issuer).toBe('https://evil.example');
  });

  it('never override public_url, which names the issuer, iss and callbacks', async () => {
    gw = await startTestGateway({ config: minimalConfig + provider + 'trust_proxy: true\npublic_url: https://gateway.example/\n' });
    expect(await selfNames(gw, forwarded)).toMatchObject({ issuer: 'https://gateway.example', iss: 'https://gateway.example', callback: 'https://gateway.example/signin/corp/callback' });
  });
});
