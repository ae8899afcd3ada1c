// Loaded with `--import` ahead of tsx (npm start, npm test, the bench, bin/parley.js without a
// build): the dependencies made of hundreds of ES module files. Through loader hooks, which on
// Node 20 run on a thread of their own, every file costs a round trip to that thread: on a
// slow machine typebox took 1.4-1.9 s to import through tsx against 0.3-0.4 s without, kysely
// 0.8 s against 0.2, and `npm start` answered its first request after 3.4-3.9 s instead of
// 2.6-3.2 s with this file. Loaded before tsx registers its hooks, they are already in the
// module cache when the TypeScript asks for them.
await Promise.all([import('typebox'), import('kysely')]);
