import type { ScratchDatabase } from './scratch-database.js';

/**
 * What is wrong with the writes a server acknowledged, read from its database directly: each
 * acknowledged create (`acknowledged`: its `name` → the id its 201 gave) must be stored under its
 * id with its `user.created` event in the outbox; every users row must have its event and every
 * such event its row; and a SQLite file must pass `pragma integrity_check`.
 */
export async function storedWriteProblems(db: ScratchDatabase, acknowledged: ReadonlyMap<string, number>): Promise<string[]> {
  const problems: string[] = [];
  const rows = await db.query<{ id: number | string; name: string }>('select "id", "name" from "users"');
  const events = await db.query<{ recordId: number | string }>('select "recordId" from "_restgraph_events" where "type" = ?', ['user.created']);
  const byName = new Map(rows.map((r) => [r.name, Number(r.id)]));
  const ids = new Set(rows.map((r) => Number(r.id)));
  const evented = new Set(events.map((e) => Number(e.recordId)));
  for (const [name, id] of acknowledged) {
    if (byName.get(name) !== id) problems.push(`acknowledged create ${name} (id ${id}) is missing`);
    else if (!evented.has(id)) problems.push(`acknowledged create ${name} (id ${id}) has no user.created event`);
  }
  for (const id of ids) if (!evented.has(id)) problems.push(`users row ${id} has no user.created event`);
  for (const id of evented) if (!ids.has(id)) problems.push(`a user.created event names users row ${id}, which does not exist`);
  if (db.dialect === 'sqlite') {
    const integrity = await db.query<{ integrity_check: string }>('pragma integrity_check');
    if (integrity[0]?.integrity_check !== 'ok') problems.push(`integrity_check: ${JSON.stringify(integrity)}`);
  }
  return problems;
}
