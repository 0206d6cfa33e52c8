// Every named schema, for code that needs a shape rather than a route.
export * from './admin.ts';
export * from './audio.ts';
export * from './chat.ts';
export * from './embeddings.ts';
export * from './images.ts';
export * from './jobs.ts';
export * from './messages.ts';
export * from './models.ts';
export * from './oauth.ts';
export * from './responses.ts';
export * from './usage.ts';
