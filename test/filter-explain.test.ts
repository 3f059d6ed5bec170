import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { filterSchema } from './helpers/filter-schema.js';

/**
 * The plans of filtered lists, as the database explains the statement restgraph sends: a filter
 * on an indexed field uses its index, an `or` of two indexed fields uses both (SQLite's MULTI-INDEX
 * OR, PostgreSQL's BitmapOr), and `posts.any(…)` reaches posts through their foreign-key index,
 * never by scanning posts for each user.
 */

describe('filter= plans use the indexes', () => {
  let t: TestApp;
  const statements: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ schema: filterSchema(), onSqlStatement: (sql) => statements.push(sql) });
    const now = "'2024-01-01T00:00:00.000Z'";
    if (t.db.dialect === 'postgres') {
      await t.db.run(`insert into "users" ("name", "email", "age", "createdAt", "updatedAt") select 'u' || n, 'e' || n, n % 90, ${now}, ${now} from generate_series(1, 3000) as n`);
      await t.db.run(`insert into "posts" ("title", "views", "authorId", "createdAt", "updatedAt") select 't' || n, n % 500, 1 + n % 3000, ${now}, ${now} from generate_series(1, 9000) as n`);
      await t.db.run('analyze "users"');
      await t.db.run('analyze "posts"');
    } else {
      await t.db.run(`with recursive s(n) as (select 1 union all select n + 1 from s where n < 3000) insert into "users" ("name", "email", "age", "createdAt", "updatedAt") select 'u' || n, 'e' || n, n % 90, ${now}, ${now} from s`);
      await t.db.run(`with recursive s(n) as (select 1 union all select n + 1 from s where n < 9000) insert into "posts" ("title", "views", "authorId", "createdAt", "updatedAt") select 't' || n, n % 500, 1 + n % 3000, ${now}, ${now} from s`);
    }
  });
  afterAll(async () => t.close());

  /** The plan of the list statement `url` sends, its parameters given in order. */
  async function plan(url: string, parameters: unknown[]): Promise<string> {
    statements.length = 0;
    const response = await t.app.inject({ method: 'GET', url });
    expect(response.statusCode, response.body).toBe(200);
    const sql = statements.find((s) => s.startsWith('select') && s.includes(' where '));
    expect(sql, statements.join('\n')).toBeDefined();
    if (t.db.dialect === 'postgres') {
      let n = 0;
      const literal = (sql ?? '').replace(/\$\d+/g, () => {
        const v = parameters[n++];
        return typeof v === 'number' ? String(v) : `'${String(v)}'`;
      });
      const rows = await t.db.query<{ 'QUERY PLAN': string }>(`explain ${literal}`);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    }
    const rows = await t.db.query<{ detail: string }>(`explain query plan ${sql ?? ''}`, parameters);
    return rows.map((r) => r.detail).join('\n');
  }

  it('a filter on an indexed field uses its index', async () => {
    const text = await plan(`/users?filter=${encodeURIComponent("email = 'e42'")}&limit=5`, ['e42', 6]);
    if (t.db.dialect === 'postgres') expect(text).toMatch(/Index Scan using rg_ix_users_email|Bitmap Index Scan on rg_ix_users_email/);
    else expect(text).toContain('USING INDEX rg_ix_users_email');
  });

  it('an or of two indexed fields uses both indexes', async () => {
    const text = await plan(`/users?filter=${encodeURIComponent("email = 'e42' or name = 'u7'")}&limit=5`, ['e42', 'u7', 6]);
    if (t.db.dialect === 'postgres') {
      expect(text).toContain('BitmapOr');
      expect(text).toContain('rg_ix_users_email');
      expect(text).toContain('rg_ix_users_name');
    } else {
      expect(text).toContain('MULTI-INDEX OR');
      expect(text).toContain('rg_ix_users_email');
      expect(text).toContain('rg_ix_users_name');
    }
  });

  it('posts.any(…) reaches posts through their foreign-key index', async () => {
    const text = await plan(`/users?filter=${encodeURIComponent("name = 'u5' and posts.any(views > 3)")}&limit=5`, ['u5', 3, 6]);
    expect(text).toContain('rg_ix_posts_authorId');
    if (t.db.dialect === 'postgres') expect(text).not.toMatch(/Seq Scan on posts/);
    else expect(text).not.toMatch(/SCAN _rg_f1(?! USING)/);
  });

  it('relation paths nested in paths: each relation read once for the statement, never once per row around it', async () => {
    // author.posts.any(…): on SQLite, a correlated subquery inside the author's would run again for
    // every post of the author of every post; the inner test is a list computed once instead.
    const text = await plan(`/posts?filter=${encodeURIComponent('author.posts.any(views > 498) or author.posts.none(views < 1)')}&limit=5`, [498, 1, 6]);
    // PostgreSQL: its subplans are hashed (computed once), never run per row.
    if (t.db.dialect === 'postgres') expect(text).not.toMatch(/(?<!hashed )SubPlan \d+\)/);
    else {
      expect(text).toMatch(/^LIST SUBQUERY/m);
      expect(text).not.toMatch(/CORRELATED LIST SUBQUERY/);
    }
  });
});
