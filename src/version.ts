// What Parley reports about itself. svc_feature_level is the highest reference feature
// level whose features Parley fully implements; raise it only as features land.
export const PARLEY_VERSION = '0.1.0';
export const SVC_VERSION = `${PARLEY_VERSION}-parley`;
export const SVC_MERGE_BASE = SVC_VERSION;
export const SVC_FEATURE_LEVEL = 1;
/** Changes whenever the server restarts with different code; clients compare it. */
export const SERVER_GENERATION = Math.floor(Date.now() / 1000);
