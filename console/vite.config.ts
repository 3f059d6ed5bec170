// Builds the admin console (console/) into dist/console/, served by restgraph at /admin
// (src/rest/admin-console-routes.ts): `npm run build` runs it after tsc.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // The page is /admin and its files /admin/assets/<name>-<hash>.<ext>.
  base: '/admin/',
  // Preact's automatic JSX runtime (preact/jsx-runtime), never its development form (`__source`,
  // `__self` on every element), which vite would choose when NODE_ENV is not production (under vitest).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact', development: false } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console/', import.meta.url)),
    emptyOutDir: true,
    // One chunk: nothing to preload, and no polyfill script to inline.
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: true,
    reportCompressedSize: true,
  },
});
