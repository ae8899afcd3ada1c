// Who may do what, for every registered route: test/hardening/permission-table.ts lists
// the callers allowed on each route and what the others get. Every route the app
// registers must have a row, so a new route fails here until its permissions are stated.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ROUTE_AREAS } from '../../src/app.ts';
import { REALM_ICON_FILE_URL } from '../../src/http/routes/realm-icon.ts';
import { EMOJI_FILE_URL, EMOJI_STILL_FILE_URL } from '../../src/http/routes/custom-emoji.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { callerFor, EVERY_CALLER, UNAUTHORIZED, type Who } from '../support/callers.ts';
import { PERMISSION_TABLE, type Outcome, type Row } from './permission-table.ts';

/** Every route the app serves: the API areas, the files outside /api/v1, the OpenAPI document. */
function registeredRoutes(): Map<string, 'user' | 'none'> {
  const routes = new Map<string, 'user' | 'none'>();
  for (const area of ROUTE_AREAS) for (const r of area) routes.set(`${r.method} ${r.url}`, r.auth);
  for (const url of [REALM_ICON_FILE_URL, EMOJI_FILE_URL, EMOJI_STILL_FILE_URL]) {
    routes.set(`GET ${url}`, 'none');
  }
  routes.set('GET /openapi.json', 'none');
  return routes;
}

const REGISTERED = registeredRoutes();

test('every registered route has exactly one row, and every row a registered route', () => {
  const rows = PERMISSION_TABLE.map((r) => r.route);
  assert.deepEqual(
    rows.filter((r, i) => rows.indexOf(r) !== i),
    [],
    'routes with more than one row',
  );
  assert.deepEqual(
    [...REGISTERED.keys()].filter((r) => !rows.includes(r)),
    [],
    'registered routes without a row',
  );
  assert.deepEqual(
    rows.filter((r) => !REGISTERED.has(r)),
    [],
    'rows naming no registered route',
  );
});

/** Every method and path Fastify serves, read from its route tree (HEAD and OPTIONS aside). */
function servedRoutes(tree: string): string[] {
  const stack: string[] = [];
  const served: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^(.*?)(?:├── |└── )(\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    stack.push(m[2]);
    for (const method of (m[3] ?? '').split(', ').filter(Boolean)) {
      if (method !== 'HEAD' && method !== 'OPTIONS') served.push(`${method} ${stack.join('')}`);
    }
  }
  return served;
}

test('the table is checked against every route the app serves', async () => {
  // A route added to Fastify directly, not through ROUTE_AREAS, would escape the table.
  const t = await buildTestApp();
  try {
    // Fastify names a parameter by every name routes gave it there (':a|:b'): compare shapes.
    const shape = (route: string) => route.replace(' /api/v1/', ' /').replace(/:[^/]+/g, ':');
    const served = servedRoutes(t.app.printRoutes({ commonPrefix: false })).map(shape);
    assert.deepEqual(
      [...new Set(served)].sort(),
      [...new Set([...REGISTERED.keys()].map(shape))].sort(),
    );
  } finally {
    await t.close();
  }
});

/** What a refused caller gets on this row. */
function expectedRefusal(row: Row, who: Who): Outcome {
  const special = row.except?.[who];
  if (special) return special;
  const unauthorized = UNAUTHORIZED[who];
  if (unauthorized && REGISTERED.get(row.route) === 'user') {
    return { status: 401, body: unauthorized };
  }
  assert.ok(row.deny, `${row.route}: no refusal stated for ${who}`);
  return row.deny;
}

async function callAs(t: TestApp, row: Row, who: Who) {
  const call = await row.call(t, who);
  const client = callerFor(t, who);
  const method = row.route.split(' ')[0];
  if (call.raw) {
    const res = await client.inject({ method: method as 'GET', url: call.path });
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(res.body) as Record<string, unknown>;
    } catch {
      // A file, not JSON.
    }
    return { status: res.statusCode, body, text: res.body };
  }
  if (call.files) return client.multipart(method, call.path, call.params ?? {}, call.files);
  return client.request(method, call.path, call.params ?? {});
}

describe('who may do what', () => {
  for (const row of PERMISSION_TABLE) {
    test(row.route, async () => {
      let t = await buildTestApp();
      try {
        for (const who of EVERY_CALLER) {
          if (row.isolate && who !== EVERY_CALLER[0]) {
            await t.close();
            t = await buildTestApp();
          }
          const res = await callAs(t, row, who);
          if (row.allow.includes(who)) {
            assert.ok(
              res.status >= 200 && res.status < 300 && (res.body.result ?? 'success') === 'success',
              `${row.route} as ${who}: ${res.status} ${res.text.slice(0, 300)}`,
            );
          } else {
            assert.deepEqual(
              { status: res.status, body: res.body },
              expectedRefusal(row, who),
              `${row.route} as ${who}`,
            );
          }
        }
      } finally {
        await t.close();
      }
    });
  }
});
