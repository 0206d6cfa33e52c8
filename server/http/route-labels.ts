// What each capability route is, as the request log and the tracer name it: its API surface, its
// client format and its GenAI operation. Taken from the route that matched (the descriptors'
// bindings, the capability table), never guessed from the URL: a request refused before its route
// ran (a bad credential, a bad X-Request-Id) is recorded with them too.
import type { AppRoute } from '@ts-rest/core';
import type { FastifyRequest } from 'fastify';
import { contract } from '../../contract/index.ts';
import { CAPABILITY_DESCRIPTORS } from '../capabilities/index.ts';
import type { InferenceRoute, RouteBinding } from '../capabilities/descriptor.ts';
import { DEFAULT_CLIENT_FORMAT } from '../client-formats/index.ts';
import { operationOf, surfaceOf } from '../config/capabilities.ts';
import { routeOptionsOf } from './route-options.ts';

export type RouteLabel = { surface: string; format: string; operation: string };

/** A binding's label: a text format names its own; the gateway's other routes speak its own shape (DEFAULT_CLIENT_FORMAT). */
export const labelOf = (binding: Pick<RouteBinding<InferenceRoute>, 'capability' | 'format'>): RouteLabel => ({
  surface: surfaceOf(binding.capability),
  format: binding.format ?? DEFAULT_CLIENT_FORMAT.name,
  operation: operationOf(binding.capability),
});

/** By the contract's route object, which the router hands every request as `config.tsRestRoute`. */
const LABELS = new Map<AppRoute, RouteLabel>();
for (const descriptor of CAPABILITY_DESCRIPTORS) {
  for (const [name, binding] of Object.entries(descriptor.routes)) {
    const route = contract.inference[name as InferenceRoute] as AppRoute;
    if (binding) LABELS.set(route, labelOf(binding as RouteBinding<InferenceRoute>));
  }
}

/** The matched route's label; undefined for a route no capability serves, or none matched. */
export const routeLabel = (request: FastifyRequest): RouteLabel | undefined => LABELS.get((routeOptionsOf(request).config as { tsRestRoute?: AppRoute } | undefined)?.tsRestRoute as AppRoute);
