// What Node's HTTP server answered by itself on a request it had already handed to the gateway (a
// body that stalled or was malformed: http/client-errors.ts writes the answer on the socket), so
// the request's record says what the client received rather than the reply's untouched default.
import type { ServerResponse } from 'node:http';

export type NodeAnswer = { status: number; code: string };

const answers = new WeakMap<ServerResponse, NodeAnswer>();

export const noteNodeAnswer = (response: ServerResponse, answer: NodeAnswer) => void answers.set(response, answer);

export const nodeAnswerOf = (response: ServerResponse): NodeAnswer | undefined => answers.get(response);

/** The status a request ended with when nobody answered it: the client closed the connection first (nginx's 499). */
export const CLIENT_CLOSED: NodeAnswer = { status: 499, code: 'client_closed_request' };
