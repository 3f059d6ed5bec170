import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * `npm ci` on a clean clone, with the supported Node, prints no warning: no dependency asks for
 * another Node (EBADENGINE), and every dependency with an install script is named in
 * `allowScripts` (npm 11 warns about the others; `@scarf/scarf`, the telemetry of
 * swagger-ui-dist, is denied there).
 */

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

interface LockedPackage {
  version?: string;
  hasInstallScript?: boolean;
}

interface PackageManifest {
  allowScripts?: Record<string, boolean>;
}

interface PackageLock {
  packages: Record<string, LockedPackage>;
}

const readJson = (file: string): unknown => JSON.parse(readFileSync(join(ROOT, file), 'utf8'));

describe('installing the project', () => {
  it('every dependency with an install script is allowed or denied in allowScripts', () => {
    const allowScripts = (readJson('package.json') as PackageManifest).allowScripts ?? {};
    const lock = readJson('package-lock.json') as PackageLock;
    const covered = (name: string, version: string | undefined) => name in allowScripts || (version !== undefined && `${name}@${version}` in allowScripts);
    const uncovered = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
      .map(([path, entry]) => ({ name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length), version: entry.version }))
      .filter(({ name, version }) => !covered(name, version))
      .map(({ name, version }) => `${name}@${String(version)}`);
    expect(uncovered).toEqual([]);
    expect(allowScripts['@scarf/scarf']).toBe(false);
  });
});
