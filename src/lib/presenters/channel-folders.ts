// Channel folders as the API shows them.
import type { ChannelFolderRow } from '../../store/schema.ts';

export interface PresentedChannelFolder {
  id: number;
  name: string;
  description: string;
  rendered_description: string;
  order: number;
  date_created: number;
  creator_id: number | null;
  is_archived: boolean;
}

export function presentChannelFolder(row: ChannelFolderRow): PresentedChannelFolder {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    rendered_description: row.rendered_description,
    order: row.sort_order,
    date_created: row.date_created,
    creator_id: row.creator_id,
    is_archived: row.is_archived === 1,
  };
}
