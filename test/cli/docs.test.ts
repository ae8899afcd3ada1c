// The documentation lists the routes the server really serves: README's "Routes implemented
// so far" and the `done` rows of docs/api-coverage.md, both against the registered routes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ROUTE_AREAS } from '../../src/app.ts';

/** "METHOD /path" for every registered route, path parameters as {name}. */
function registeredRoutes(): string[] {
  const routes = ROUTE_AREAS.flat().map(
    (r) => `${r.method} ${r.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`,
  );
  // Served outside the route areas (src/app.ts).
  routes.push('GET /openapi.json');
  return routes.sort();
}

/** Table rows "| METHOD | `path` | ..." as [METHOD /path, the rest of the row]. */
function tableRoutes(markdown: string, prefix = ''): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  for (const m of markdown.matchAll(
    /^\| (GET|POST|PATCH|PUT|DELETE) +\| `([^`]+)`[^|]*\|(.*)$/gm,
  )) {
    assert.ok(m[2].startsWith(prefix), `${m[2]} should start with ${prefix}`);
    rows.push([`${m[1]} ${m[2].slice(prefix.length)}`, m[3]]);
  }
  return rows;
}

test('docs/api-coverage.md marks exactly the registered routes done', () => {
  const rows = tableRoutes(readFileSync('docs/api-coverage.md', 'utf8'));
  const listed = rows.map(([route]) => route);
  assert.deepEqual(
    listed.filter((r, i) => listed.indexOf(r) !== i),
    [],
    'each endpoint is listed once',
  );
  for (const [route, rest] of rows) {
    assert.match(rest, /\| (done|planned \([a-z -]+\)) *\|$/, `status of ${route}`);
  }
  const done = rows.filter(([, rest]) => /\| done *\|$/.test(rest)).map(([route]) => route);
  assert.deepEqual(done.sort(), registeredRoutes());
});

test("README's route table lists exactly the registered routes", () => {
  const readme = readFileSync('README.md', 'utf8');
  const start = readme.indexOf('### Routes implemented so far');
  assert.ok(start >= 0);
  const section = readme.slice(start, readme.indexOf('\n## ', start));
  const listed = tableRoutes(section, '/api/v1').map(([route]) => route);
  assert.deepEqual(listed.sort(), registeredRoutes());
});
