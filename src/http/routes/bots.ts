// Bots: creation, listing, changes, deactivation, API keys and configuration files.
import type { AnyRoute } from '../route.ts';

export const botsRoutes: AnyRoute[] = [];
