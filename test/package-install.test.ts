import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * `npm ci` on a clean clone, with the supported Node, prints no warning: no dependency asks for
 * another Node (EBADENGINE), and every dependency with an install script is named in
 * `allowScripts` (npm 11 warns about the others; `@scarf/scarf`, the telemetry of
 * swagger-ui-dist, is denied there).
 */

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const run = promisify(execFile);

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
  it('npm ci prints no warning on this Node (an install planned from the lockfile, offline)', { timeout: 60_000 }, async () => {
    const folder = mkdtempSync(join(tmpdir(), 'rg-install-'));
    try {
      // What npm ci reads: the manifest, the lockfile and the folders of file: dependencies.
      for (const path of ['package.json', 'package-lock.json', 'test/vendor']) cpSync(join(ROOT, path), join(folder, path), { recursive: true });
      const { stdout, stderr } = await run('npm', ['ci', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: folder, env: { ...process.env, npm_config_loglevel: 'warn' } });
      expect(stderr.split('\n').filter((line) => /\bwarn\b/i.test(line))).toEqual([]);
      expect(stdout).toMatch(/added \d+ packages/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

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
