// Where the request pipeline is assembled: the cross-cutting concerns every capability call runs
// with, one line each, in the order their hooks run (docs/architecture.md "Adding a concern").
import type { Concern } from './concern.ts';
import { RequestPipeline, type PipelineDeps } from './pipeline.ts';
import { recordRoute } from './record-route.ts';

export const concernsOf = (deps: PipelineDeps): Concern[] => [recordRoute(deps.trails)];

/** The pipeline with its concerns; `extra`: more, after them (a test's, an embedding application's). */
export const assemblePipeline = (deps: PipelineDeps, extra: readonly Concern[] = []) => new RequestPipeline(deps, [...concernsOf(deps), ...extra]);
