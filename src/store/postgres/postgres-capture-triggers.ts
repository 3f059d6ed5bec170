import { createHash } from 'node:crypto';
import pg from 'pg';
import { ConfigError } from '../../errors.js';
import {
  CAPTURE_CHANNEL,
  CAPTURE_OPERATIONS,
  CAPTURE_TRIGGER_PREFIX,
  CAPTURED_CHANGES_TABLE,
  captureTriggerName,
  literal,
  operationOfTrigger,
  quoted,
  type CaptureTable,
  type CaptureTableState,
  type CaptureTriggerOptions,
  type CaptureTriggers,
} from '../capture/capture-names.js';

/** The function every capture trigger calls, in the system schema. */
export const CAPTURE_FUNCTION = 'restgraph_capture_row';

/**
 * The captured-changes table: each row another program changed, its images as jsonb (`to_jsonb`
 * keeps numeric's every digit; the relay reads them back through `jsonb_populate_record`, typed
 * as the table's own columns, never through JavaScript numbers).
 */
function tableStatement(system: string): string {
  return `create table if not exists ${quoted(system)}.${quoted(CAPTURED_CHANGES_TABLE)} (
  seq bigint generated always as identity primary key,
  table_schema text not null,
  table_name text not null,
  op char(1) not null,
  old_row jsonb,
  new_row jsonb,
  captured_at timestamptz not null default clock_timestamp()
)`;
}

/** The channel the function notifies: named as PostgresSignals names `restgraph_capture` for connections whose schema is the system schema. */
export function captureChannel(system: string): string {
  return `${CAPTURE_CHANNEL}_${createHash('sha256').update(system).digest('hex').slice(0, 16)}`;
}

/**
 * The trigger function's body. It runs with its owner's rights (security definer) so that a
 * program allowed to write a table need not be allowed to write restgraph's schema; restgraph's own
 * transactions set `restgraph.capture_skip` (their changes already have their events). An update
 * that changes nothing is not recorded.
 */
function functionBody(system: string): string {
  return `
declare
  v_old jsonb;
  v_new jsonb;
begin
  if current_setting('restgraph.capture_skip', true) = 'on' then
    return null;
  end if;
  if tg_op <> 'INSERT' then v_old := to_jsonb(old); end if;
  if tg_op <> 'DELETE' then v_new := to_jsonb(new); end if;
  if tg_op = 'UPDATE' and v_old = v_new then
    return null;
  end if;
  insert into ${quoted(system)}.${quoted(CAPTURED_CHANGES_TABLE)} (table_schema, table_name, op, old_row, new_row)
    values (tg_table_schema, tg_table_name, left(tg_op, 1), v_old, v_new);
  perform pg_notify(${literal(captureChannel(system))}, '');
  return null;
end
`;
}

function functionStatement(system: string): string {
  return `create or replace function ${quoted(system)}.${quoted(CAPTURE_FUNCTION)}() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp
as $restgraph_capture$${functionBody(system)}$restgraph_capture$`;
}

const TRIGGERS = `
select c.relname as "table", t.tgname as name, pn.nspname = $2 and p.proname = $3 as ours
from pg_trigger t
join pg_class c on c.oid = t.tgrelid
join pg_namespace n on n.oid = c.relnamespace
join pg_proc p on p.oid = t.tgfoid
join pg_namespace pn on pn.oid = p.pronamespace
where n.nspname = $1 and not t.tgisinternal and starts_with(t.tgname, $4)
order by c.relname, t.tgname`;

export async function openPostgresCaptureTriggers(connectionString: string, description: string, options: CaptureTriggerOptions): Promise<CaptureTriggers> {
  const schema = options.databaseSchema ?? 'public';
  const system = options.systemSchema;
  const client = new pg.Client({ connectionString, application_name: 'restgraph capture' });
  try {
    await client.connect();
  } catch (error) {
    throw new ConfigError('DATABASE_URL', `cannot reach the database ${description}: ${(error as Error).message}`);
  }
  const found = await client.query('select 1 from pg_namespace where nspname = $1', [schema]);
  if (found.rowCount === 0) {
    await client.end();
    throw new ConfigError('database.schema', `${description} has no schema "${schema}"`);
  }

  const triggers = async (): Promise<{ table: string; name: string; ours: boolean }[]> =>
    (await client.query<{ table: string; name: string; ours: boolean }>(TRIGGERS, [schema, system, CAPTURE_FUNCTION, CAPTURE_TRIGGER_PREFIX])).rows;

  const enableStatements = (tables: readonly CaptureTable[]): string[] => {
    const statements = [`create schema if not exists ${quoted(system)}`, tableStatement(system), functionStatement(system)];
    for (const { table } of tables) {
      for (const operation of CAPTURE_OPERATIONS) {
        const name = quoted(captureTriggerName(table, operation));
        const on = `${quoted(schema)}.${quoted(table)}`;
        statements.push(`drop trigger if exists ${name} on ${on}`);
        statements.push(`create trigger ${name} after ${operation} on ${on} for each row execute function ${quoted(system)}.${quoted(CAPTURE_FUNCTION)}()`);
      }
    }
    return statements;
  };

  const inTransaction = async <T>(work: () => Promise<T>): Promise<T> => {
    await client.query('begin');
    try {
      const result = await work();
      await client.query('commit');
      return result;
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    }
  };

  return {
    description,
    changesTable: `${system}.${CAPTURED_CHANGES_TABLE}`,
    async status(tables) {
      const body = (
        await client.query<{ src: string }>(
          'select p.prosrc as src from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = $1 and p.proname = $2',
          [system, CAPTURE_FUNCTION],
        )
      ).rows[0]?.src;
      const functionCurrent = body === functionBody(system);
      const present = (await triggers()).filter((t) => t.ours);
      const states: CaptureTableState[] = [];
      const named = new Set(tables.map((t) => t.table));
      for (const table of [...named, ...new Set(present.map((t) => t.table).filter((t) => !named.has(t)))]) {
        const installed = CAPTURE_OPERATIONS.filter((operation) => present.some((t) => t.table === table && t.name === captureTriggerName(table, operation)));
        states.push({ table, installed, current: named.has(table) && functionCurrent && installed.length === CAPTURE_OPERATIONS.length, mapped: named.has(table) });
      }
      return states;
    },
    async missing(tables) {
      const found = await client.query<{ name: string }>(
        "select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relkind in ('r', 'p') and c.relname = any($2::text[])",
        [schema, tables.map((t) => t.table)],
      );
      const names = new Set(found.rows.map((r) => r.name));
      return tables.map((t) => t.table).filter((t) => !names.has(t));
    },
    enableStatements: (tables) => Promise.resolve(enableStatements(tables)),
    async enable(tables) {
      await inTransaction(async () => {
        for (const statement of enableStatements(tables)) await client.query(statement);
      });
    },
    async disable() {
      return inTransaction(async () => {
        const removed: string[] = [];
        for (const trigger of await triggers()) {
          if (!trigger.ours || operationOfTrigger(trigger.name) === undefined) continue;
          await client.query(`drop trigger ${quoted(trigger.name)} on ${quoted(schema)}.${quoted(trigger.table)}`);
          removed.push(`${trigger.table}: ${trigger.name}`);
        }
        // The function goes once no trigger calls it (another schema's tables may still).
        await client.query(`
          do $restgraph_capture$ begin
            if exists (select 1 from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = ${literal(system)} and p.proname = ${literal(CAPTURE_FUNCTION)})
              and not exists (select 1 from pg_trigger t join pg_proc p on p.oid = t.tgfoid join pg_namespace n on n.oid = p.pronamespace
                where n.nspname = ${literal(system)} and p.proname = ${literal(CAPTURE_FUNCTION)}) then
              drop function ${quoted(system)}.${quoted(CAPTURE_FUNCTION)}();
            end if;
          end $restgraph_capture$`);
        return removed;
      });
    },
    async close() {
      await client.end().catch(() => undefined);
    },
  };
}
