import { isVerifiedFor, verificationMark, type StoredCredentials } from '../../store/credential-store.js';
import { isPlainObject } from '../merge-patch.js';

/**
 * The credentials of an account as `export data --with-credentials` writes them and `import data`
 * reads them: beside the record on its line, `{"resource":"users","record":{…},"credentials":
 * {"passwordHash":"$argon2id$v=19$m=19456,t=2,p=1$…","emailVerified":true}}`. The hash is the
 * standard PHC string of Argon2id, so accounts move between servers (and to other software) with
 * their passwords; `passwordHash` is null for an account without a password (one made by OIDC
 * sign-in).
 */
export interface ExportedCredentials {
  passwordHash: string | null;
  emailVerified: boolean;
}

/**
 * An Argon2id PHC string (`$argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>`, salt and
 * hash in unpadded base64) whose cost a sign-in can pay: at most 256 MiB, 16 passes and 16 lanes
 * (a hash made with other parameters than today's is replaced at its account's next sign-in).
 */
const ARGON2ID_PHC = /^\$argon2id\$v=19\$m=(\d{1,7}),t=(\d{1,2}),p=(\d{1,2})\$[A-Za-z0-9+/]{11,64}\$[A-Za-z0-9+/]{16,128}$/;
const MAX_MEMORY_KIB = 256 * 1024;
const MAX_PASSES = 16;
const MAX_LANES = 16;

/** What an export line carries for stored credentials. */
export function exportedCredentials(stored: StoredCredentials, address: unknown): ExportedCredentials {
  return { passwordHash: stored.passwordHash, emailVerified: isVerifiedFor(stored.emailVerifiedAt, address) };
}

/**
 * The credentials of an import line, as they will be stored (verified now when `emailVerified`),
 * or why not, as one line naming the JSON pointer.
 */
export function importedCredentials(value: unknown, now: string, address: unknown): StoredCredentials | string {
  if (!isPlainObject(value)) return '/credentials: must be {"passwordHash": "$argon2id$…" or null, "emailVerified": true or false}';
  const unknown = Object.keys(value).filter((key) => key !== 'passwordHash' && key !== 'emailVerified');
  if (unknown.length > 0) return `/credentials/${unknown[0] ?? ''}: is not a credential (passwordHash, emailVerified)`;
  const { passwordHash, emailVerified } = value;
  if (emailVerified !== undefined && typeof emailVerified !== 'boolean') return '/credentials/emailVerified: must be true or false';
  if (passwordHash !== null && passwordHash !== undefined) {
    const why = argon2idProblem(passwordHash);
    if (why !== undefined) return `/credentials/passwordHash: ${why}`;
  }
  return { passwordHash: typeof passwordHash === 'string' ? passwordHash : null, emailVerifiedAt: emailVerified === true && typeof address === 'string' ? verificationMark(address, now) : null };
}

/** Why `hash` is not an Argon2id PHC string a sign-in can verify, or undefined when it is one. */
function argon2idProblem(hash: unknown): string | undefined {
  const expected = 'must be an Argon2id PHC string ($argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>)';
  if (typeof hash !== 'string') return expected;
  const match = ARGON2ID_PHC.exec(hash);
  if (match === null) return hash.startsWith('$argon2id$') ? `${expected}; this one is malformed` : `${expected}, not ${hash.startsWith('$') ? `a $${hash.split('$')[1] ?? ''}$ hash` : 'this'}`;
  const [memory, passes, lanes] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (memory > MAX_MEMORY_KIB || passes > MAX_PASSES || lanes > MAX_LANES || passes < 1 || lanes < 1 || memory < 8 * lanes) {
    return `its parameters (m=${memory}, t=${passes}, p=${lanes}) are outside what a sign-in verifies: m up to ${MAX_MEMORY_KIB} KiB, t and p from 1 to 16`;
  }
  return undefined;
}
