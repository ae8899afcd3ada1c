// Reporting a message to the organization's moderators.
import { Type } from 'typebox';
import { reportMessage } from '../../actions/message-reports.ts';
import { MAX_REPORT_DESCRIPTION_LENGTH, REPORT_TYPES } from '../../lib/message-reports.ts';
import { defineRoute } from '../route.ts';

const MessageIdPath = Type.Object({
  message_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});

export const messageReportsRoutes = [
  defineRoute({
    method: 'POST',
    url: '/messages/:message_id/report',
    summary: 'Report a message to the moderation request channel',
    tags: ['messages'],
    auth: 'user',
    path: MessageIdPath,
    params: Type.Object({
      report_type: Type.Union(REPORT_TYPES.map((r) => Type.Literal(r))),
      description: Type.String({ maxLength: MAX_REPORT_DESCRIPTION_LENGTH, default: '' }),
    }),
    handler: async ({ ctx, actor, path, params }) => {
      await reportMessage(ctx, actor, path.message_id as number, {
        reportType: params.report_type,
        description: params.description,
      });
      return {};
    },
  }),
];
