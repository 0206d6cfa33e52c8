// oidc-provider ships no types; the test uses a handful of its options.
declare module 'oidc-provider';
