#!/usr/bin/env node
// The CLI entry. TypeScript runs through tsx's loader (no build step to forget).
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../server/cli.ts');
await runCli(process.argv);
