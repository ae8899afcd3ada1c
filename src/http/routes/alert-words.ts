// The caller's alert words.
import { Type } from 'typebox';
import { addAlertWords, listAlertWords, removeAlertWords } from '../../actions/alert-words.ts';
import { defineRoute } from '../route.ts';

export const MAX_ALERT_WORD_LENGTH = 100;
const AlertWords = () =>
  Type.Array(Type.String({ maxLength: MAX_ALERT_WORD_LENGTH }), { maxItems: 1000 });

export const alertWordsRoutes = [
  defineRoute({
    method: 'GET',
    url: '/users/me/alert_words',
    summary: "The caller's alert words",
    tags: ['users'],
    auth: 'user',
    handler: async ({ ctx, actor }) => ({ alert_words: await listAlertWords(ctx, actor) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/users/me/alert_words',
    summary: 'Add alert words; answers the whole list',
    tags: ['users'],
    auth: 'user',
    params: Type.Object({ alert_words: AlertWords() }),
    handler: async ({ ctx, actor, params }) => ({
      alert_words: await addAlertWords(ctx, actor, params.alert_words),
    }),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/users/me/alert_words',
    summary: 'Remove alert words; answers the whole list',
    tags: ['users'],
    auth: 'user',
    params: Type.Object({ alert_words: AlertWords() }),
    handler: async ({ ctx, actor, params }) => ({
      alert_words: await removeAlertWords(ctx, actor, params.alert_words),
    }),
  }),
];
