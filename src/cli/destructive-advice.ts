import { defaultDatabaseUrl } from '../app/default-database.js';
import { DestructiveMigrationError } from '../errors.js';
import { databaseTarget } from '../store/open-database.js';
import type { DatabaseChoice, SchemaChoice } from './schema-and-database.js';

/**
 * The refusal of a destructive migration as `serve` and `migrate` print it: naming the schema file
 * and the database, with the exact commands for what the user may want: a database of the
 * schema's own (when this one is not), or applying the changes here, which deletes data.
 */
export function destructiveRefusal(schema: SchemaChoice, database: DatabaseChoice, refused: DestructiveMigrationError): DestructiveMigrationError {
  const { description, file } = databaseTarget(database.url);
  const schemaArgument = schema.argument === undefined ? '' : ` ${schema.argument}`;
  const here = `npx restgraph migrate${schemaArgument} -d ${description}`;
  const advice = ['Nothing was changed.'];
  if (database.argument !== undefined) {
    // A database server: another database on it; a file: the schema's own file.
    const own = file === undefined ? description.replace(/\/[^/?]*(\?|$)/, '/<another database>$1') : defaultDatabaseUrl(schema.argument);
    advice.push(
      `If this database belongs to another schema, serve ${schema.argument ?? 'the example'} from a database of its own:`,
      `  npx restgraph serve${schemaArgument} -d ${own}`,
    );
  }
  advice.push(
    'To apply the changes to this database: this DELETES the data listed above; back the database up first. Preview, then apply:',
    `  ${here} --dry-run`,
    `  ${here} --allow-destructive`,
  );
  return new DestructiveMigrationError(refused.changes, { schema: schema.argument ?? '(the built-in example)', database: description, advice }, refused.renames);
}
