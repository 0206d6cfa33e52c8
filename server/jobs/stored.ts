// The `jobs` table's JSON columns: each shape is written and read back through one function here,
// not cast where it is used. Only the gateway writes these columns, so reading one back is an
// unchecked step (no validation when a job is claimed or polled), like an upstream answer's.
import type { z } from 'zod';
import type { Job } from '../../contract/jobs.ts';
import type { Reservation } from '../billing/hooks.ts';
import type { Prisma } from '../db/generated/client.ts';

/**
 * A request, state or result for its Json column. They are JSON by construction (validated client
 * bodies and what the kinds build from them) but typed `unknown` where the kinds hold them, and
 * Prisma's input type cannot take `unknown` (nor a bare null, which went as it is before): one cast.
 */
export const jsonColumn = (value: unknown) => value as Prisma.InputJsonValue;

/** The `reservation` column: the Reservation submit or adopt stored, null when there is none. */
export const storedReservation = (column: Prisma.JsonValue | null) => column as Reservation | null;

/** The `error` column: the error object a failed job stored (runner.ts `fail`), without its request id. */
export const storedError = (column: Prisma.JsonValue) => column as Omit<NonNullable<z.infer<typeof Job>['error']>, 'request_id'>;
