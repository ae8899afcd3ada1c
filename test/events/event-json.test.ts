// GET /events answers are written by events/event-json.ts: a message shaped for one client
// form is one shared object whose JSON is made once for all its receivers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventsJson, markShared, stringJson, type JsonText } from '../../src/events/event-json.ts';
import type { EventsReply, NumberedEvent } from '../../src/events/queues.ts';
import type { ParleyEvent } from '../../src/events/types.ts';
import { successText, successTextAround } from '../../src/http/route.ts';
import { pollAnswerJson } from '../../src/http/routes/events.ts';
import {
  ALICE,
  ALL,
  BOB,
  client,
  env,
  EventQueues,
  flat,
  notice,
  open,
  take,
  takeNumbered,
} from './queue-kit.ts';

const CAROL = 12;

/** JSON text whose byte count, made as it was written, is checked against the text's own. */
function counted({ text, bytes }: JsonText): string {
  assert.equal(bytes, Buffer.byteLength(text), `the bytes of ${text}`);
  return text;
}
const eventsText = (events: readonly NumberedEvent[]): string => counted(eventsJson(events));
const pollAnswerText = (reply: EventsReply, ignored: string[]): string =>
  counted(pollAnswerJson(reply, ignored));

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

test('receivers of one form and the same flags share one event; the sending queue gets its own', () => {
  const q = new EventQueues(env());
  const alice = open(q, client({ applyMarkdown: true }, ALL));
  const bob = open(q, client({ applyMarkdown: true }, ALL), BOB);
  const bob2 = open(q, client({ applyMarkdown: true }, ALL), BOB);
  const carol = open(q, client({ applyMarkdown: true }, ALL), CAROL);
  const unread = { flags: [] };
  q.deliver([
    notice({ type: 'message', message: sample, flags: [] } as never, [ALICE, BOB, CAROL], {
      perUser: {
        [ALICE]: { ...unread, __local_echo: { queueId: alice, localId: '1.5' } },
        [BOB]: unread,
        [CAROL]: unread,
      },
    }),
  ]);
  const [a] = takeNumbered(q, alice, ALICE);
  const [b] = takeNumbered(q, bob, BOB);
  const [b2] = takeNumbered(q, bob2, BOB);
  const [c] = takeNumbered(q, carol, CAROL);
  assert.equal(b.event, b2.event);
  assert.equal(b.event, c.event);
  assert.notEqual(a.event, b.event);
  const { __raw_content: _raw, ...htmlForm } = sample;
  assert.deepEqual(flat([a]), [
    { type: 'message', message: htmlForm, flags: [], local_message_id: '1.5', id: 0 },
  ]);
  assert.deepEqual(flat([c]), [{ type: 'message', message: htmlForm, flags: [], id: 0 }]);
  assert.equal(eventsText([c]), JSON.stringify(flat([c])));
  assert.equal(eventsText([a]), JSON.stringify(flat([a])));
});

test('a shared event is written once and its id added last; an own id field is replaced each time', () => {
  const shared = { type: 'x', n: 1 };
  const withId = { type: 'y', id: 'own', n: 1 };
  markShared(shared);
  markShared(withId);
  const events = numbered([shared, withId, shared], 4);
  const text = eventsText(events);
  assert.equal(
    text,
    '[{"type":"x","n":1,"id":4},{"type":"y","id":5,"n":1},{"type":"x","n":1,"id":6}]',
  );
  assert.equal(text, spreadJson(events));
  shared.n = 2;
  assert.equal(eventsText(numbered([shared])), '[{"type":"x","n":1,"id":0}]');
  withId.n = 2;
  assert.equal(eventsText(numbered([withId])), '[{"type":"y","id":0,"n":2}]');
  const empty = {};
  markShared(empty);
  assert.equal(eventsText(numbered([empty, empty], 7)), '[{"id":7},{"id":8}]');
});

/** Events as a queue numbers them, from plain objects. */
const numbered = (events: Record<string, unknown>[], firstId = 0): NumberedEvent[] =>
  events.map((event, i) => ({ id: firstId + i, event: event as unknown as ParleyEvent }));
/** What a reply's events were before eventsJson wrote the id itself. */
const spreadJson = (events: readonly NumberedEvent[]): string =>
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
  const text = eventsText(events);
  assert.equal(text, spreadJson(events));
  assert.equal(
    text,
    '[{"type":"message","message":{"content":"x","n":1},"flags":["read"],"id":3},' +
      '{"type":"heartbeat","id":4},{"type":"x","id":5,"after":1}]',
  );
  assert.equal(eventsText([]), '[]');
  const odd = numbered([{ 'a"b': 1, 'line\nkey': [null], type: 'x' }, {}]);
  assert.equal(eventsText(odd), spreadJson(odd));
  // Made once: shared objects are never changed after shaping, so later writes reuse it.
  shared.n = 2;
  assert.equal(eventsText(events), text);
  const unshared = { n: 1 };
  const first = eventsText(numbered([{ message: unshared }]));
  unshared.n = 2;
  assert.notEqual(eventsText(numbered([{ message: unshared }])), first);
});

test('a poll answer is the envelope of every answer around its events, as JSON.stringify writes it', () => {
  const events = numbered([{ type: 'message', message: { content: '"x"' }, flags: [] }, {}], 2);
  const cases: Array<[EventsReply, string[]]> = [
    [{ events, queue_id: 'node:abc"d' }, []],
    [{ events }, ['a', 'b"c']],
    [{ events: [] }, []],
  ];
  for (const [reply, ignored] of cases) {
    const body = { events: JSON.parse(spreadJson(reply.events)), queue_id: reply.queue_id };
    assert.equal(pollAnswerText(reply, ignored), successText(body, ignored));
  }
  assert.equal(
    pollAnswerText({ events: numbered([{ type: 'heartbeat' }], 9), queue_id: 'q' }, []),
    '{"result":"success","msg":"","events":[{"type":"heartbeat","id":9}],"queue_id":"q"}',
  );
  assert.equal(successTextAround('', []), '{"result":"success","msg":""}');
  assert.equal(successTextAround('', ['x']), successText({}, ['x']));
});

test('stringJson writes any string as JSON.stringify does, plain ones without it', () => {
  const strings = [
    '',
    'q',
    '1764200000:Ab-_9z',
    ' ~!#$%&()*+,./;<=>?@[]^`{|}',
    'say "hi"',
    'back\\slash',
    'tab\there',
    'line\nbreak',
    '\u0000\u001f\u007f',
    'é ü ß',
    '日本語',
    '😀',
    '\ud800 lone',
    'end \udc00',
  ];
  for (const s of strings) assert.equal(counted(stringJson(s)), JSON.stringify(s), s);
  // Each character on its own, across the ASCII range and the surrogates.
  for (const code of [...Array(0x80).keys(), 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000]) {
    const s = `a${String.fromCharCode(code)}b`;
    assert.equal(counted(stringJson(s)), JSON.stringify(s), `U+${code.toString(16)}`);
  }
});

test('an answer counts its bytes as it is written, whatever the text holds', () => {
  const message = { content: '<p>Grüße, 日本語 😀 "q"</p>', sender_full_name: 'Zoë' };
  markShared(message);
  const sharedEvent = { type: 'message', message, flags: ['read'] };
  markShared(sharedEvent);
  const emptyShared = {};
  markShared(emptyShared);
  const events = numbered(
    [
      sharedEvent,
      { type: 'typing', sender: { email: 'zoë@example.com' } },
      { type: 'ünread', id: 'own', text: 'ß' },
      emptyShared,
      sharedEvent,
    ],
    98,
  );
  const cases: Array<[EventsReply, string[]]> = [
    [{ events, queue_id: '1764200000:Ab' }, []],
    [{ events, queue_id: 'café:1' }, []],
    [{ events }, ['naïve', 'x"y']],
    [{ events: [] }, ['日本']],
  ];
  for (const [reply, ignored] of cases) {
    const body = { events: JSON.parse(spreadJson(reply.events)), queue_id: reply.queue_id };
    // pollAnswerText checks the count against Buffer.byteLength of the text.
    assert.equal(pollAnswerText(reply, ignored), successText(body, ignored));
  }
});

test('the answer of one shared event is written from text kept with the event, as any other', () => {
  const message = { content: '<p>Grüße "q"</p>', id: 41 };
  markShared(message);
  const event = { type: 'message', message, flags: [] };
  markShared(event);
  const empty = {};
  markShared(empty);
  const ownId = { type: 'y', id: 'own' };
  markShared(ownId);
  const unshared = { type: 'typing', op: 'start' };
  // Each event twice with other ids and queue ids: the second answer reuses the kept text.
  for (const one of [event, empty, ownId, unshared]) {
    for (const [id, queueId] of [
      [0, '1764200000:Ab'],
      [12345, 'café "q"'],
    ] as const) {
      const reply: EventsReply = { events: numbered([one], id), queue_id: queueId };
      const body = { events: [{ ...one, id }], queue_id: queueId };
      assert.equal(pollAnswerText(reply, []), successText(body, []));
    }
  }
  // Without a queue id, or with ignored parameters, the same event is written the other way.
  const events = numbered([event], 7);
  assert.equal(pollAnswerText({ events }, []), successText({ events: [{ ...event, id: 7 }] }, []));
  assert.equal(
    pollAnswerText({ events, queue_id: 'q' }, ['x']),
    successText({ events: [{ ...event, id: 7 }], queue_id: 'q' }, ['x']),
  );
});
