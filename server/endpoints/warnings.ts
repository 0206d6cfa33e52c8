// The warnings channel: what a request asked for that the chosen upstream could not take (a field
// dropped, a value changed), named in one X-Gateway-Warnings header (and stored on a job), never
// silently dropped. Tool stripping keeps its own X-Gateway-Stripped-Tools header.
export const WARNINGS_HEADER = 'x-gateway-warnings';

/** The header for `warnings` (none when there are none); each warning is one clause, joined by "; ". */
export const warningsHeader = (warnings: readonly string[]): Record<string, string> => (warnings.length ? { [WARNINGS_HEADER]: warnings.join('; ') } : {});
