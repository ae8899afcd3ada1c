import type { CreateTableBuilder } from 'kysely';

export type MigrationDialect = 'sqlite' | 'postgres';

/** An auto-increment integer primary key named id, spelled as each database wants it. */
export function idColumn<T extends string>(
  table: CreateTableBuilder<T, never>,
  dialect: MigrationDialect,
): CreateTableBuilder<T, 'id'> {
  return dialect === 'postgres'
    ? table.addColumn('id', 'serial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}
