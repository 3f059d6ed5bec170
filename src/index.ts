/** Public API: build the app in-process (tests, embedding) or run the CLI. */
export { buildApp, type RestgraphContext } from './app/build-app.js';
export { DEFAULT_OPTIONS, type RestgraphOptions } from './app/app-options.js';
export { optionsFromEnv } from './app/options-from-env.js';
export type { OidcOptions, OidcProviderOptions, SignInTokens, SignInWithIdentity, VerifiedIdentity } from './auth/oidc-settings.js';
export { loadSchemaFile, parseSchemaText, EXAMPLE_SCHEMA_PATH } from './schema/load-schema.js';
export type { SchemaModel, ResourceModel, FieldModel, SchemaDefinition } from './schema/schema-model.js';
export * from './errors.js';
