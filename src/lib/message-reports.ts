// Message reports: the reasons a user may give, and the Markdown of the report that the
// Notification Bot posts into the moderation request channel.
import { silentMention } from './messages.ts';

/** Report reasons with the labels the report shows (also the register's report types). */
export const REPORT_REASONS = {
  spam: 'Spam',
  harassment: 'Harassment',
  inappropriate: 'Inappropriate content',
  norms: 'Violates community norms',
  other: 'Other reason',
} as const;

export type ReportType = keyof typeof REPORT_REASONS;
export const REPORT_TYPES = Object.keys(REPORT_REASONS) as ReportType[];

/** Clients limit report descriptions to this many characters; the server enforces it. */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;

export interface ReportPerson {
  id: number;
  full_name: string;
}

export interface ReportInput {
  reporter: ReportPerson;
  reported: ReportPerson;
  reportType: ReportType;
  description: string;
  message: { id: number; content: string };
  /** The message's channel and topic, or null for a direct message. */
  channel: { name: string; topic: string } | null;
}

/** A ```quote block that no backtick run inside the text can close early. */
function quoteBlock(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}quote\n${text}\n${fence}`;
}

/** The topic a user's reports go to. */
export function reportTopic(reported: ReportPerson): string {
  return `${reported.full_name}'s reports`;
}

/**
 * The report: who reported what (a link to the channel message), the reason, the notes and
 * the reported content, quoted. The reference server hides the content in a spoiler;
 * spoilers are not rendered by Parley, so it is a plain quote.
 */
export function reportContent(r: ReportInput): string {
  const where = r.channel
    ? `#**${r.channel.name}>${r.channel.topic}@${r.message.id}**`
    : `a direct message (ID ${r.message.id})`;
  const lines = [
    `${silentMention(r.reporter)} reported ${where} sent by ${silentMention(r.reported)}.`,
    '',
    `- **Reason**: ${REPORT_REASONS[r.reportType]}`,
  ];
  if (r.description !== '') lines.push('- **Notes**:', quoteBlock(r.description));
  // The blank line ends the list, so the heading is not read as part of its last item.
  lines.push('', `**Message sent by ${silentMention(r.reported)}**`, quoteBlock(r.message.content));
  return lines.join('\n');
}
