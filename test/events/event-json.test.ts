// GET /events answers are written by events/event-json.ts: a message shaped for one client
// form is one shared object whose JSON is made once for all its receivers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventsJson, markShared } from '../../src/events/event-json.ts';
import type { NumberedEvent } from '../../src/events/queues.ts';
import type { ParleyEvent } from '../../src/events/types.ts';
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

/** Events as a queue numbers them, from plain objects. */
const numbered = (events: Record<string, unknown>[], firstId = 0): NumberedEvent[] =>
  events.map((event, i) => ({ id: firstId + i, event: event as unknown as ParleyEvent }));
/** What a reply's events were before eventsJson wrote the id itself. */
const spreadJson = (events: NumberedEvent[]): string =>
  JSON.stringify(events.map(({ id, event }) => ({ ...event, id })));

test('eventsJson writes what JSON.stringify of { ...event, id } would, reusing a shared object JSON', () => {
  const shared = { content: 'x', n: 1 };
  markShared(shared);
  const events = numbered(
    [
      { type: 'message', message: shared, flags: ['read'] },
      { type: 'heartbeat', skipped: undefined },
      // An event's own id field is replaced in place, as the spread did.
      { type: 'x', id: 'own', after: 1 },
    ],
    3,
  );
  const text = eventsJson(events).text;
  assert.equal(text, spreadJson(events));
  assert.equal(
    text,
    '[{"type":"message","message":{"content":"x","n":1},"flags":["read"],"id":3},' +
      '{"type":"heartbeat","id":4},{"type":"x","id":5,"after":1}]',
  );
  assert.equal(eventsJson([]).text, '[]');
  const odd = numbered([{ 'a"b': 1, 'line\nkey': [null], type: 'x' }, {}]);
  assert.equal(eventsJson(odd).text, spreadJson(odd));
  // Made once: shared objects are never changed after shaping, so later writes reuse it.
  shared.n = 2;
  assert.equal(eventsJson(events).text, text);
  const unshared = { n: 1 };
  const first = eventsJson(numbered([{ message: unshared }])).text;
  unshared.n = 2;
  assert.notEqual(eventsJson(numbered([{ message: unshared }])).text, first);
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
