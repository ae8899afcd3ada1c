// GET /events answers are written by events/event-json.ts: a message shaped for one client
// form is one shared object whose JSON is made once for all its receivers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventsJson, markShared } from '../../src/events/event-json.ts';
import { JsonText, holdsJsonText, stringifyBody } from '../../src/lib/json-text.ts';
import { ALICE, ALL, BOB, client, env, EventQueues, notice, open, take } from './queue-kit.ts';

const sample = {
  type: 'stream',
  id: 7,
  subject: 'lunch',
  content: '<p>hi "there"</p>',
  __raw_content: 'hi "there"',
  avatar_url: 'https://secure.gravatar.com/avatar/x',
};

test('receivers of one form share one message object; other forms get their own', () => {
  const q = new EventQueues(env());
  const html = open(q, client({ applyMarkdown: true }, ALL));
  const html2 = open(q, client({ applyMarkdown: true }, ALL), BOB);
  const raw = open(q, client({ applyMarkdown: false }, ALL));
  q.deliver([
    notice({ type: 'message', message: sample, flags: [] } as never, [ALICE, BOB], {
      perUser: { [ALICE]: { flags: ['read'] }, [BOB]: { flags: [] } },
    }),
  ]);
  const [a] = take(q, html);
  const [b] = take(q, html2, BOB);
  const [c] = take(q, raw);
  assert.equal(a.message, b.message, 'one object for one form');
  assert.notEqual(a.message, c.message);
  const { __raw_content: _raw, ...htmlForm } = sample;
  assert.deepEqual(a, { type: 'message', message: htmlForm, flags: ['read'], id: 0 });
  assert.deepEqual(b, { type: 'message', message: htmlForm, flags: [], id: 0 });
  assert.deepEqual(c.message, {
    ...htmlForm,
    content: 'hi "there"',
    content_type: 'text/x-markdown',
  });
  // The canonical message keeps its hint for the next form.
  assert.equal(sample.__raw_content, 'hi "there"');
});

test('eventsJson writes what JSON.stringify would, reusing a shared object JSON', () => {
  const shared = { content: 'x', n: 1 };
  markShared(shared);
  const events = [
    { type: 'message', message: shared, flags: ['read'], id: 3 },
    { type: 'heartbeat', id: 4, skipped: undefined },
  ];
  const text = eventsJson(events).text;
  assert.equal(text, JSON.stringify(events));
  assert.equal(eventsJson([]).text, '[]');
  const odd = [{ 'a"b': 1, 'line\nkey': [null], type: 'x' }, {}];
  assert.equal(eventsJson(odd).text, JSON.stringify(odd));
  // Made once: shared objects are never changed after shaping, so later writes reuse it.
  shared.n = 2;
  assert.equal(eventsJson(events).text, text);
  const unshared = { n: 1 };
  const first = eventsJson([{ message: unshared }]).text;
  unshared.n = 2;
  assert.notEqual(eventsJson([{ message: unshared }]).text, first);
});

test('stringifyBody places JsonText as is and everything else as JSON', () => {
  const body = { result: 'success', msg: '', events: new JsonText('[{"id":1}]'), queue_id: 'q' };
  assert.equal(holdsJsonText(body), true);
  assert.equal(holdsJsonText({ result: 'success' }), false);
  assert.deepEqual(JSON.parse(stringifyBody(body)), {
    result: 'success',
    msg: '',
    events: [{ id: 1 }],
    queue_id: 'q',
  });
});
