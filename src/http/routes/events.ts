// Event queues: POST /register, GET /events (long-poll), DELETE /events.
import type { AnyRoute } from '../route.ts';

export const eventsRoutes: AnyRoute[] = [];
