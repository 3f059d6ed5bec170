import { rotateSigningKey } from '../core/accounts/signing-keys.js';
import { DatabaseNotFoundError } from '../errors.js';
import { recordedSchema } from '../store/migrate.js';
import { openDatabase } from '../store/open-database.js';
import { SigningKeyStore } from '../store/signing-key-store.js';
import { chooseSchema, databaseToOpen, sameCommandWith } from './schema-and-database.js';

export interface KeysFlags {
  /** Selects the default database (the schema's own). */
  schemaFile?: string | undefined;
  databaseUrl?: string;
}

/**
 * `keys rotate`: a new key signs account access tokens from now on (every instance picks it up
 * within a minute); the old ones keep verifying the tokens they signed until those expire.
 */
export async function runKeysRotate(flags: KeysFlags): Promise<void> {
  const schema = chooseSchema(flags.schemaFile, process.env);
  const database = databaseToOpen(flags.databaseUrl, process.env, schema, sameCommandWith);
  const { db, description } = await openDatabase(database.url, { existing: true });
  try {
    if ((await recordedSchema(db)) === undefined) {
      throw new DatabaseNotFoundError(`The database ${description} holds no restgraph schema (only \`restgraph serve\` and \`restgraph migrate\` create one).`);
    }
    process.stderr.write(`Database: ${description}\n`);
    const kid = await rotateSigningKey(new SigningKeyStore(db));
    process.stdout.write(`Access tokens are signed with key ${kid} from now on; the previous keys verify the tokens they signed until those expire.\n`);
  } finally {
    await db.close();
  }
}
