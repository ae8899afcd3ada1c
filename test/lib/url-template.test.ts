// RFC 6570 template checks used by code playgrounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { templateVariables } from '../../src/lib/url-template.ts';

test('variables of valid templates, in order', () => {
  const cases: Array<[string, string[]]> = [
    ['https://x.example/', []],
    ['https://x.example/{code}', ['code']],
    ['https://x.example/run{?code,lang}', ['code', 'lang']],
    ['https://x.example{/path*}{#frag:10}', ['path', 'frag']],
    ['https://x.example/%20{+code}', ['code']],
    ['https://x.example/{a.b}{%41}', ['a.b', '%41']],
  ];
  for (const [template, names] of cases) assert.deepEqual(templateVariables(template), names);
});

test('invalid templates', () => {
  for (const template of [
    'https://x.example/{code',
    'https://x.example/code}',
    'https://x.example/{}',
    'https://x.example/{?}',
    'https://x.example/{co de}',
    'https://x.example/{code:0}',
    'https://x.example/{a..b}',
    'https://x example/{code}',
    'https://x.example/%zz{code}',
    'https://x.example/<{code}>',
    'https://x.example/\u0001{code}',
  ]) {
    assert.equal(templateVariables(template), null, template);
  }
});
