// Drafts as the API shows them.
import type { DraftRow } from '../../store/schema.ts';

export interface PresentedDraft {
  id: number;
  type: string;
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
}

export function presentDraft(row: DraftRow): PresentedDraft {
  return {
    id: row.id,
    type: row.type,
    to: JSON.parse(row.to_ids) as number[],
    topic: row.topic,
    content: row.content,
    timestamp: row.last_edit_time,
  };
}
