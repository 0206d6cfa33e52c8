// The request stage's record: the model the request names and the job a 202 started, for the
// request log and the tracer. (What the route is, its surface, format and operation, the HTTP
// layer records as the request arrives: http/route-labels.ts.)
import type { RequestTrails } from '../observe/request-trail.ts';
import type { Concern } from './concern.ts';

export const recordRoute = (trails: RequestTrails): Concern => ({
  name: 'record-route',
  request: {
    start(facts) {
      const trail = trails.get(facts.requestId);
      if (!trail) return;
      trail.model = facts.model;
    },
    close(facts, end) {
      if (end.jobId === null) return;
      const trail = trails.get(facts.requestId);
      if (trail) trail.jobId = end.jobId;
    },
  },
});
