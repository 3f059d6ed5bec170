import { hash, verify } from '@node-rs/argon2';
import { dictionary } from '@zxcvbn-ts/language-common';
import { ValidationError } from '../../errors.js';

/**
 * Argon2id with OWASP's first recommended configuration: 19 MiB of memory, 2 iterations, 1 lane
 * (Password Storage Cheat Sheet, "Argon2id").
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html#argon2id
 */
export const ARGON2_PARAMETERS = Object.freeze({
  // Algorithm.Argon2id: the package's enum is an ambient const enum, which this build cannot import.
  algorithm: 2,
  memoryCost: 19 * 1024, // KiB: 19 MiB
  timeCost: 2,
  parallelism: 1,
});

/** What every hash made with {@link ARGON2_PARAMETERS} starts with: a hash without it is rehashed at the next sign-in. */
const CURRENT_PREFIX = `$argon2id$v=19$m=${ARGON2_PARAMETERS.memoryCost},t=${ARGON2_PARAMETERS.timeCost},p=${ARGON2_PARAMETERS.parallelism}$`;

/** Shortest password accepted, in characters (OWASP Authentication Cheat Sheet; NIST SP 800-63B 5.1.1.2). */
export const MIN_PASSWORD_LENGTH = 8;
/** Longest, in characters: long enough for passphrases, short enough that hashing stays bounded. */
export const MAX_PASSWORD_LENGTH = 1024;

let commonPasswords: ReadonlySet<string> | undefined;

/**
 * The common passwords refused: zxcvbn-ts's list of the most used passwords (@zxcvbn-ts/language-common,
 * `passwords-common`, some 30,000 entries from leaked password sets), compared case-insensitively.
 */
function common(): ReadonlySet<string> {
  commonPasswords ??= new Set(dictionary['passwords-common'].map((word) => word.toLowerCase()));
  return commonPasswords;
}

/**
 * Checks a new password against the policy: 8 to 1,024 characters (code points; any character,
 * no composition rules), not on the common-password list.
 * @throws ValidationError pointing at `pointer`
 */
export function checkNewPassword(password: unknown, pointer: string): string {
  const refuse = (detail: string): never => {
    throw new ValidationError(`The password is not accepted: it ${detail}.`, { errors: [{ pointer, detail }] });
  };
  if (typeof password !== 'string') return refuse('must be a string');
  const length = passwordLength(password);
  if (length < MIN_PASSWORD_LENGTH) refuse(`must have at least ${MIN_PASSWORD_LENGTH} characters`);
  if (length > MAX_PASSWORD_LENGTH) refuse(`must have at most ${MAX_PASSWORD_LENGTH} characters`);
  if (common().has(password.toLowerCase())) refuse('is one of the most common passwords; choose another');
  return password;
}

/** A password's length in characters (Unicode code points, as NIST SP 800-63B counts them). */
export function passwordLength(password: string): number {
  let length = 0;
  for (let i = 0; i < password.length; i++) {
    const code = password.charCodeAt(i);
    // A high surrogate and the low one after it are one character.
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < password.length) i++;
    length++;
  }
  return length;
}

/** The standard `$argon2id$…` string of a password. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_PARAMETERS);
}

/** Whether `password` matches `stored` (a `$argon2id$…` string); a malformed hash matches nothing. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** Whether a stored hash was made with other parameters than today's (it is replaced at the next sign-in). */
export function needsRehash(stored: string): boolean {
  return !stored.startsWith(CURRENT_PREFIX);
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the time a real verification takes when there is nothing to verify (an unknown
 * identifier, an account without a password), so that the answer's timing does not tell the two apart.
 */
export async function verifyNothing(password: string): Promise<false> {
  dummyHash ??= hashPassword('restgraph: no such account, a password nobody has');
  await verifyPassword(await dummyHash, password);
  return false;
}
