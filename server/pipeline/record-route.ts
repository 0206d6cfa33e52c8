// The request stage's record: what the request log and the tracer say the call was (its capability's
// API surface, client format and model) from the route that matched, and the job a 202 started.
import { surfaceOf } from '../config/capabilities.ts';
import type { RequestTrails } from '../observe/request-trail.ts';
import type { Concern } from './concern.ts';

export const recordRoute = (trails: RequestTrails): Concern => ({
  name: 'record-route',
  request: {
    start(facts) {
      const trail = trails.get(facts.requestId);
      if (!trail) return;
      trail.capability = surfaceOf(facts.capability);
      trail.format = facts.format;
      trail.model = facts.model;
    },
    close(facts, end) {
      if (end.jobId === null) return;
      const trail = trails.get(facts.requestId);
      if (trail) trail.jobId = end.jobId;
    },
  },
});
