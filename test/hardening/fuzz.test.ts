// Generated hostile requests against every route of the OpenAPI document, as a member, a
// guest and an administrator. Whatever the request, the server answers without a 5xx; an
// error is the JSON envelope {result: "error", msg, code}; and an error leaves the
// database exactly as it was. (test/http/conventions.test.ts walks fixed hostile values
// parameter by parameter; this explores combinations of them.)
//
// Default run: PARLEY_FUZZ_RUNS (4) cases per route and caller, from a fixed seed.
// Long run: `npm run fuzz` (more cases); PARLEY_FUZZ_SEED picks another seed and
// PARLEY_FUZZ_ONLY="POST /api/v1/messages" narrows the run to matching routes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { basicAuth } from '../support/client.ts';
import {
  diffSnapshots,
  snapshotDb,
  sqliteImage,
  storedIds,
  type DbSnapshot,
} from '../support/db-snapshot.ts';
import {
  hostileRequests,
  listOperations,
  type HostileRequest,
  type IdPool,
  type Operation,
} from '../support/openapi-fuzz.ts';

const RUNS = Number(process.env.PARLEY_FUZZ_RUNS || 4);
const SEED = Number(process.env.PARLEY_FUZZ_SEED || 20261122);
const ONLY = process.env.PARLEY_FUZZ_ONLY || '';
const CALLERS = ['member', 'guest', 'admin'] as const;

let t: TestApp;
let baseline: DbSnapshot;
let baselineImage: Buffer | null;
let rebuilds = 0;
let cases = 0;
let successes = 0;

async function freshApp(): Promise<void> {
  if (t) await t.close();
  // Heartbeats come at once, so a generated long-poll on GET /events is answered quickly.
  t = await buildTestApp({ config: { heartbeatMinMs: 20, heartbeatJitterMs: 0 } });
  baseline = await snapshotDb(t.ctx.store);
  baselineImage = sqliteImage(t.ctx.store);
}

before(async () => {
  await freshApp();
});
after(async () => {
  await t.close();
});

function checkEnvelope(req: HostileRequest, res: LightMyRequestResponse): void {
  const where = `${req.describe}\n→ ${res.statusCode} ${res.body.slice(0, 500)}`;
  assert.ok(res.statusCode < 500, `server error: ${where}`);
  if (res.statusCode < 400) return;
  assert.match(String(res.headers['content-type']), /^application\/json/, where);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    assert.fail(`error body is not JSON: ${where}`);
  }
  assert.equal(body.result, 'error', where);
  assert.equal(typeof body.msg, 'string', where);
  assert.equal(typeof body.code, 'string', where);
}

async function changesSinceBaseline(): Promise<string[]> {
  const image = sqliteImage(t.ctx.store);
  if (image && baselineImage && image.equals(baselineImage)) return [];
  return diffSnapshots(baseline, await snapshotDb(t.ctx.store));
}

/** Send one request and hold the answer and the database to the rules. */
async function probe(req: HostileRequest): Promise<void> {
  cases++;
  const res = await t.app.inject({
    method: req.method as 'GET',
    url: req.url,
    headers: req.headers,
    ...(req.payload !== undefined ? { payload: req.payload } : {}),
  });
  const changes = await changesSinceBaseline();
  if (res.statusCode < 400) successes++;
  // A success may change things: start the next case from the fixture again.
  if (changes.length > 0) {
    rebuilds++;
    await freshApp();
  }
  checkEnvelope(req, res);
  assert.ok(
    res.statusCode < 400 || changes.length === 0,
    `an error changed the database: ${req.describe}\n→ ${res.statusCode} ${res.body.slice(0, 300)}\n${changes.join('\n')}`,
  );
}

test('the database check sees a change, and an app rebuild undoes it', async () => {
  assert.deepEqual(await changesSinceBaseline(), []);
  await t.ctx.db
    .updateTable('users')
    .set({ full_name: 'Changed' })
    .where('id', '=', t.fx.member.id)
    .execute();
  const changes = await changesSinceBaseline();
  assert.equal(changes[0], 'users: 1 row(s) gone, 1 new');
  await freshApp();
  assert.deepEqual(await changesSinceBaseline(), []);
});

test('generated hostile requests on every route', async (tc) => {
  const doc = await t.as(t.fx.member).get('/openapi.json');
  const all = listOperations(doc.body as Parameters<typeof listOperations>[0]);
  assert.ok(all.length > 100, `only ${all.length} operations in the document`);
  const pool: IdPool = { ids: storedIds(baseline) };
  const ops = all.filter((op) => `${op.method} ${op.path}`.includes(ONLY));
  for (const op of ops) {
    // Seeds follow the document's order, so a narrowed run replays the same cases.
    const opSeed = SEED + all.indexOf(op) * CALLERS.length;
    await tc.test(`${op.method} ${op.path}`, async () => {
      for (const [i, caller] of CALLERS.entries()) {
        await fuzzOperation(op, caller, pool, opSeed + i);
      }
    });
  }
  tc.diagnostic(
    `fuzz: ${cases} requests (${successes} successful, ${rebuilds} app rebuilds) on ${ops.length} operations × ${CALLERS.length} callers, ${RUNS} runs each, seed ${SEED}`,
  );
});

async function fuzzOperation(
  op: Operation,
  caller: (typeof CALLERS)[number],
  pool: IdPool,
  seed: number,
): Promise<void> {
  const who = () => t.fx[caller];
  const credentials = { host: 'parley.test', authorization: '' };
  const arb = hostileRequests(op, pool, credentials);
  const details = await fc.check(
    fc.asyncProperty(arb, async (req) => {
      // Credentials are read at send time: the app (and its fixture) may have been rebuilt.
      req.headers.authorization = basicAuth(who().email, who().api_key);
      await probe(req);
    }),
    { numRuns: RUNS, seed },
  );
  if (details.failed) {
    const reason =
      details.errorInstance instanceof Error
        ? details.errorInstance.message
        : String(details.errorInstance);
    assert.fail(
      `${op.method} ${op.path} as ${caller} failed after ${details.numRuns} case(s); ` +
        `reproduce with PARLEY_FUZZ_SEED=${SEED} PARLEY_FUZZ_RUNS=${RUNS} PARLEY_FUZZ_ONLY="${op.method} ${op.path}" ` +
        `(fast-check seed ${details.seed}, path ${details.counterexamplePath}):\n${reason}`,
    );
  }
}
