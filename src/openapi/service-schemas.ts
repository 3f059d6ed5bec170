import { CLAIM_NAME, MAX_CLAIM_ITEMS, MAX_CLAIM_TEXT, MAX_CLAIMS } from '../core/token-claims.js';
import type { SchemaObject } from './openapi-types.js';

const DATE_TIME: SchemaObject = { type: 'string', format: 'date-time' };
const DATE_TIME_OR_NULL: SchemaObject = { type: ['string', 'null'], format: 'date-time' };
const ID: SchemaObject = { type: 'integer', minimum: 1 };

/** Event types of the resources served: `user.created`, `user.updated`, `user.deleted`, … */
export function eventTypes(singulars: readonly string[]): string[] {
  return singulars.flatMap((s) => ['created', 'updated', 'deleted'].map((kind) => `${s}.${kind}`));
}

/**
 * The schemas of the service paths: API keys (/v1/tokens, src/core/token-operations.ts), webhooks
 * (/v1/webhooks, src/webhooks/webhook-input.ts and webhook-service.ts) and the index, health and
 * readiness answers (src/rest/system-routes.ts).
 */
export function serviceSchemas(types: readonly string[]): Record<string, SchemaObject> {
  const claimScalar: SchemaObject[] = [{ type: 'string', maxLength: MAX_CLAIM_TEXT }, { type: 'number' }, { type: 'boolean' }];
  const claims: SchemaObject = {
    type: 'object',
    description:
      'Values access rules read as `@auth.claims.<name>` (docs/auth.md#rules): each a string, a number, a boolean, or an array of those. ' +
      `At most ${MAX_CLAIMS} claims and 4 KiB as JSON; names are identifiers.`,
    maxProperties: MAX_CLAIMS,
    propertyNames: { pattern: CLAIM_NAME.source },
    additionalProperties: { anyOf: [...claimScalar, { type: 'array', items: { anyOf: claimScalar }, maxItems: MAX_CLAIM_ITEMS }] },
    examples: [{ org: 'acme', plan: 'pro' }],
  };
  const allowance: SchemaObject = {
    type: 'object',
    description: 'true: every row (the owner rule still applies); false: none; "rule": the rows `rule` admits, as the schema writes it.',
    properties: { allowed: { enum: [true, false, 'rule'] }, rule: { type: 'string' } },
    required: ['allowed'],
    additionalProperties: false,
    examples: [{ allowed: 'rule', rule: 'published = true or authorId = @auth.sub' }],
  };
  const token: SchemaObject = {
    type: 'object',
    description: 'An API key as admins see it: never the key itself.',
    properties: {
      id: ID,
      name: { type: 'string' },
      prefix: { type: 'string', description: 'The first characters of the key (`rg_` and 8 more), to recognise it.' },
      scopes: { type: 'array', items: { type: 'string' } },
      subject: { type: ['string', 'null'], description: 'The subject the key acts as (owner rules compare it with owner fields).' },
      claims: { ...claims, description: 'Its claims, read by access rules as `@auth.claims.<name>`; absent when it has none.' },
      createdAt: DATE_TIME,
      lastUsedAt: { ...DATE_TIME_OR_NULL, description: 'Recorded at most once a minute.' },
      expiresAt: DATE_TIME_OR_NULL,
      revokedAt: DATE_TIME_OR_NULL,
      state: { type: 'string', enum: ['active', 'expired', 'revoked'] },
    },
    required: ['id', 'name', 'prefix', 'scopes', 'subject', 'createdAt', 'lastUsedAt', 'expiresAt', 'revokedAt', 'state'],
    additionalProperties: false,
  };
  const webhookProperties: Record<string, SchemaObject> = {
    id: ID,
    url: { type: 'string', format: 'uri' },
    events: { type: 'array', items: { type: 'string', enum: [...types, '*'] } },
    description: { type: ['string', 'null'] },
    status: { type: 'string', enum: ['active', 'paused', 'disabled'] },
    disabledReason: { type: ['string', 'null'], description: 'Why it was disabled (it kept failing).' },
    failingSince: DATE_TIME_OR_NULL,
    createdAt: DATE_TIME,
    updatedAt: DATE_TIME,
  };
  const webhookInput = (whole: boolean): SchemaObject => ({
    type: 'object',
    description: whole ? 'A webhook endpoint to register.' : 'The members to change (a merge patch); the others stay.',
    properties: {
      url: { type: 'string', format: 'uri', maxLength: 2048, description: 'http or https; private, loopback and link-local targets are refused unless allowed.' },
      events: { type: 'array', items: { type: 'string', enum: [...types, '*'] }, minItems: 1, maxItems: 100, description: 'Event types, or `["*"]` for all.' },
      description: { type: ['string', 'null'], maxLength: 500 },
    },
    ...(whole ? { required: ['url', 'events'] } : {}),
    additionalProperties: false,
  });
  return {
    'restgraph.Token': token,
    'restgraph.TokenWithKey': {
      ...token,
      description: 'A new API key, with the key itself: shown only in this answer.',
      properties: { ...(token.properties as Record<string, SchemaObject>), key: { type: 'string', pattern: '^rg_[A-Za-z0-9_-]{43}$' } },
      required: [...(token.required as string[]), 'key'],
    },
    'restgraph.TokenCreate': {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 100, default: 'unnamed' },
        scopes: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,100}$' }, minItems: 1, maxItems: 100 },
        subject: { type: 'string', minLength: 1, maxLength: 200 },
        claims,
        expires: { type: 'string', description: 'A duration (`30d`, `12h`, `1y`; units s m h d w y) or a future RFC 3339 date-time.', examples: ['90d'] },
      },
      required: ['scopes'],
      additionalProperties: false,
    },
    'restgraph.Webhook': { type: 'object', description: 'A webhook endpoint: never its secret.', properties: webhookProperties, required: Object.keys(webhookProperties), additionalProperties: false },
    'restgraph.WebhookWithSecret': {
      type: 'object',
      description: 'A webhook endpoint with its signing secret: shown only on create and rotate-secret.',
      properties: { ...webhookProperties, secret: { type: 'string', pattern: '^whsec_' } },
      required: [...Object.keys(webhookProperties), 'secret'],
      additionalProperties: false,
    },
    'restgraph.WebhookCreate': webhookInput(true),
    'restgraph.WebhookPatch': webhookInput(false),
    'restgraph.WebhookDelivery': {
      type: 'object',
      description: 'One event for one endpoint, with every attempt.',
      properties: {
        id: ID,
        webhookId: ID,
        eventId: ID,
        eventType: { type: 'string' },
        status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
        attempts: { type: 'integer', minimum: 0 },
        nextAttemptAt: DATE_TIME,
        lastAttemptAt: DATE_TIME_OR_NULL,
        responseStatus: { type: ['integer', 'null'] },
        lastError: { type: ['string', 'null'] },
        createdAt: DATE_TIME,
        attemptLog: {
          type: 'array',
          items: {
            type: 'object',
            properties: { id: ID, attemptedAt: DATE_TIME, durationMs: { type: 'number', minimum: 0 }, responseStatus: { type: ['integer', 'null'] }, error: { type: ['string', 'null'] } },
            required: ['id', 'attemptedAt', 'durationMs', 'responseStatus', 'error'],
            additionalProperties: false,
          },
        },
      },
      required: ['id', 'webhookId', 'eventId', 'eventType', 'status', 'attempts', 'nextAttemptAt', 'lastAttemptAt', 'responseStatus', 'lastError', 'createdAt', 'attemptLog'],
      additionalProperties: false,
    },
    'restgraph.AccessSummary': {
      type: 'object',
      description: 'A credential and what the access rules let it do.',
      properties: {
        kind: { enum: ['anonymous', 'api-key', 'jwt', 'admin-token'] },
        subject: { type: ['string', 'null'], description: 'What owner fields are compared with (an API key\'s subject, a JWT\'s sub).' },
        scopes: { type: 'array', items: { type: 'string' } },
        claims: { type: 'object', description: 'The values rules read as `@auth.claims.<name>`: a JWT\'s payload, an API key\'s claims. Absent when the credential has none.' },
        admin: { type: 'boolean', description: 'Whether it has the admin scope, which passes every rule.' },
        resources: {
          type: 'object',
          description:
            'Per resource: whether this credential may do each operation to some row (its access passes and no row rule refuses every row), the owner field that limits it to ' +
            'its own rows (null: no such limit), and, where the schema has them, the row rules (`rules`) and the field access (`fields`) as they come to for this credential.',
          additionalProperties: {
            type: 'object',
            properties: {
              read: { type: 'boolean' },
              create: { type: 'boolean' },
              update: { type: 'boolean' },
              delete: { type: 'boolean' },
              owner: { type: ['string', 'null'] },
              rules: {
                type: 'object',
                description: 'Present when the resource has row rules: per operation, allowed on every row (true), on none (false), or on the rows `rule` admits ("rule").',
                properties: Object.fromEntries(['list', 'read', 'create', 'update', 'delete'].map((operation) => [operation, allowance])),
                required: ['list', 'read', 'create', 'update', 'delete'],
                additionalProperties: false,
              },
              fields: {
                type: 'object',
                description: 'Present when some field has read or write access of its own: per such field, reading it (a hidden field is left out of answers) and writing it.',
                additionalProperties: { type: 'object', properties: { read: allowance, write: allowance }, required: ['read', 'write'], additionalProperties: false },
              },
            },
            required: ['read', 'create', 'update', 'delete', 'owner'],
            additionalProperties: false,
          },
        },
        manage: {
          type: 'object',
          description: 'Whether it may manage API keys (/v1/tokens) and webhooks (/v1/webhooks).',
          properties: { tokens: { type: 'boolean' }, webhooks: { type: 'boolean' } },
          required: ['tokens', 'webhooks'],
          additionalProperties: false,
        },
        account: { type: ['object', 'null'], description: "With an account's access token: the account's record as the resource's read rules show it to its user (null when they hide it)." },
        emailVerified: { type: 'boolean', description: "With an account's access token: whether the account's email was confirmed (a verification link, a password reset, or an identity provider)." },
      },
      required: ['kind', 'subject', 'scopes', 'admin', 'resources', 'manage'],
      additionalProperties: false,
    },
    'restgraph.ServiceIndex': {
      type: 'object',
      description: 'What this server serves.',
      properties: {
        name: { const: 'restgraph' },
        versions: { type: 'array', items: { type: 'string' } },
        latestVersion: { type: 'string' },
        resources: { type: 'object', additionalProperties: { type: 'string' }, description: 'Each resource with its (unversioned) path.' },
        server: {
          type: 'object',
          description: 'Shown to admin credentials only: the restgraph version and the database it runs on.',
          properties: { version: { type: 'string' }, database: { type: 'string', examples: ['SQLite', 'PostgreSQL'] } },
          required: ['version', 'database'],
          additionalProperties: false,
        },
      },
      required: ['name', 'versions', 'latestVersion', 'resources'],
      additionalProperties: false,
    },
  };
}
