import { exchange, keepAliveAgent, type ChaosRequest, type ChaosResponse } from './http-exchange.js';
import { CHAOS_ADMIN_TOKEN } from './served-app.js';

/**
 * Traffic for a database outage scenario: REST creates from several clients in a loop, `/readyz`
 * every 200 ms, and a GraphQL read and a GraphQL create every 200 ms. Each answer is kept with the phase of
 * the outage its request was sent in, for {@link outageTrafficProblems} to judge.
 */

/** Where the outage stands; the scenario moves it on. */
export type OutagePhase = 'before' | 'outage' | 'after';

/** One answer the traffic got, or the lack of one. */
export interface OutageAnswer {
  /** The phase the request was sent in. */
  phase: OutagePhase;
  /** 0 when no answer came (`text` says why). */
  status: number;
  /** How long the answer took. */
  ms: number;
  /** The problem's code (REST), or each error's `extensions.code` (GraphQL). */
  codes: (string | undefined)[];
  retryAfter: string | undefined;
  problemJson: boolean;
  /** A create that succeeded: the name it sent and the id it was given. */
  created: { name: string; id: number } | undefined;
  /** The start of the body, or why there was no answer. */
  text: string;
}

export interface OutageAnswers {
  restCreates: OutageAnswer[];
  graphqlCreates: OutageAnswer[];
  graphqlReads: OutageAnswer[];
  readyz: OutageAnswer[];
}

export interface OutageTraffic {
  /** Set by the scenario as the outage begins and ends. */
  phase: OutagePhase;
  readonly answers: OutageAnswers;
  /** Stops sending; resolves once every request in flight has its answer. */
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the traffic against `base` with `writers` REST clients creating users one after another. */
export function startOutageTraffic(base: string, writers: number): OutageTraffic {
  const agent = keepAliveAgent(writers + 2);
  const answers: OutageAnswers = { restCreates: [], graphqlCreates: [], graphqlReads: [], readyz: [] };
  let running = true;
  const traffic: OutageTraffic = { phase: 'before', answers, stop: () => Promise.resolve() };
  const send = async (req: ChaosRequest, timeoutMs: number, name?: string): Promise<OutageAnswer> => {
    const phase = traffic.phase;
    const started = performance.now();
    try {
      return answerOf(phase, await exchange(base, req, { agent, timeoutMs }), performance.now() - started, name);
    } catch (error) {
      return { phase, status: 0, ms: performance.now() - started, codes: [], retryAfter: undefined, problemJson: false, created: undefined, text: `no answer: ${error instanceof Error ? error.message : String(error)}` };
    }
  };
  const writeLoop = async (writer: number): Promise<void> => {
    for (let i = 0; running; i++) {
      const name = `chaos ${writer}-${i}`;
      const answer = await send(asAdmin('POST', '/users', { name }), 20_000, name);
      answers.restCreates.push(answer);
      await sleep(answer.status === 201 ? 20 : 50);
    }
  };
  const readyzLoop = async (): Promise<void> => {
    while (running) {
      answers.readyz.push(await send({ method: 'GET', path: '/readyz' }, 5_000));
      await sleep(200);
    }
  };
  const graphqlLoop = async (): Promise<void> => {
    for (let i = 0; running; i++) {
      answers.graphqlReads.push(await send(asAdmin('POST', '/graphql', { query: '{ users(first: 1) { id } }' }), 20_000));
      const name = `chaos graphql-${i}`;
      answers.graphqlCreates.push(await send(asAdmin('POST', '/graphql', { query: `mutation { createUser(input: { name: ${JSON.stringify(name)} }) { id } }` }), 20_000, name));
      await sleep(200);
    }
  };
  const loops = [...Array.from({ length: writers }, (_, writer) => writeLoop(writer)), readyzLoop(), graphqlLoop()];
  traffic.stop = async () => {
    running = false;
    await Promise.all(loops);
    agent.destroy();
  };
  return traffic;
}

function asAdmin(method: string, path: string, body: unknown): ChaosRequest {
  return { method, path, headers: { authorization: `Bearer ${CHAOS_ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

interface AnswerBody {
  code?: unknown;
  id?: unknown;
  data?: { createUser?: { id?: unknown } | null } | null;
  errors?: { extensions?: { code?: unknown } }[];
}

/** Reads a REST or GraphQL answer; `name` is the name a create sent. */
function answerOf(phase: OutagePhase, response: ChaosResponse, ms: number, name: string | undefined): OutageAnswer {
  const contentType = response.headers['content-type'] ?? '';
  let body: AnswerBody = {};
  try {
    body = (JSON.parse(response.body) as AnswerBody | null) ?? {};
  } catch {
    // not JSON: judged by its status and text
  }
  const codes = Array.isArray(body.errors) ? body.errors.map((e) => stringOr(e.extensions?.code)) : body.code === undefined ? [] : [stringOr(body.code)];
  const createdId = Number(response.status === 201 ? body.id : body.data?.createUser?.id);
  return {
    phase,
    status: response.status,
    ms,
    codes,
    retryAfter: typeof response.headers['retry-after'] === 'string' ? response.headers['retry-after'] : undefined,
    problemJson: contentType.startsWith('application/problem+json'),
    created: name !== undefined && codes.length === 0 && Number.isInteger(createdId) ? { name, id: createdId } : undefined,
    text: response.body.slice(0, 300),
  };
}

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Every create the traffic got acknowledged (201, or GraphQL data without errors): name → id. */
export function acknowledgedCreates(answers: OutageAnswers): Map<string, number> {
  const created = [...answers.restCreates, ...answers.graphqlCreates].flatMap((a) => (a.created === undefined ? [] : [a.created]));
  return new Map(created.map((c) => [c.name, c.id]));
}

const UNAVAILABLE = 'database-unavailable';

/**
 * What is wrong in the answers: creates must be acknowledged or refused with 503 problem+json
 * `database-unavailable` and Retry-After, some refused during the outage and some acknowledged
 * before and after it; GraphQL may answer that code in `extensions.code` and nothing else, never
 * a 5xx; /readyz answers 200, or 503 `database-unavailable`, and 503 at least once during the
 * outage. Reads during the outage fail with that code, or succeed every time when `readsGoOn`.
 */
export function outageTrafficProblems(answers: OutageAnswers, expected: { readsGoOn: boolean }): string[] {
  const problems: string[] = [];
  const during = (list: OutageAnswer[]): OutageAnswer[] => list.filter((a) => a.phase === 'outage');
  const sample = (list: OutageAnswer[]): string => JSON.stringify(list.slice(0, 3));
  const unavailable = (a: OutageAnswer): boolean => a.codes.includes(UNAVAILABLE);

  const rest = answers.restCreates;
  const refused = rest.filter((a) => a.status === 503);
  const badRefusals = refused.filter((a) => a.codes[0] !== UNAVAILABLE || a.retryAfter === undefined || !a.problemJson);
  if (!during(rest).some((a) => a.status === 503)) problems.push('no REST create was refused during the outage');
  if (badRefusals.length > 0) problems.push(`503s without database-unavailable problem+json and Retry-After: ${sample(badRefusals)}`);
  const other = rest.filter((a) => a.status !== 201 && a.status !== 503);
  if (other.length > 0) problems.push(`${other.length} REST creates answered neither 201 nor 503: ${sample(other)}`);
  for (const phase of ['before', 'after'] as const) {
    if (!rest.some((a) => a.phase === phase && a.status === 201)) problems.push(`no REST create was acknowledged ${phase} the outage`);
  }

  for (const [what, list] of [['GraphQL creates', answers.graphqlCreates], ['GraphQL reads', answers.graphqlReads]] as const) {
    const wrong = list.filter((a) => a.status === 0 || a.status >= 500 || a.codes.some((code) => code !== UNAVAILABLE));
    if (wrong.length > 0) problems.push(`${wrong.length} ${what} got a 5xx, no answer or an error other than database-unavailable: ${sample(wrong)}`);
  }
  if (!during(answers.graphqlCreates).some(unavailable)) problems.push(`no GraphQL create answered database-unavailable during the outage: ${sample(during(answers.graphqlCreates))}`);
  const readsDuring = during(answers.graphqlReads);
  if (expected.readsGoOn) {
    const failed = readsDuring.filter((a) => a.codes.length > 0 || a.status !== 200);
    if (failed.length > 0) problems.push(`GraphQL reads failed during the outage, which reads should outlast: ${sample(failed)}`);
  } else if (!readsDuring.some(unavailable)) {
    problems.push(`no GraphQL read answered database-unavailable during the outage: ${sample(readsDuring)}`);
  }

  const readyz = answers.readyz;
  const wrongReadyz = readyz.filter((a) => a.status !== 200 && !(a.status === 503 && a.codes[0] === UNAVAILABLE && a.problemJson));
  if (wrongReadyz.length > 0) problems.push(`/readyz answered other than 200 or 503 database-unavailable: ${sample(wrongReadyz)}`);
  if (!during(readyz).some((a) => a.status === 503)) problems.push(`/readyz never answered 503 during the outage: ${sample(during(readyz))}`);
  return problems;
}

/** The answers counted: how many creates were acknowledged and refused, how often /readyz said 503 and how slowly. */
export function outageTrafficFigures(answers: OutageAnswers): string {
  const count = (list: OutageAnswer[], test: (a: OutageAnswer) => boolean): number => list.filter(test).length;
  const rest = answers.restCreates;
  const graphql = answers.graphqlCreates;
  return [
    `REST creates: ${count(rest, (a) => a.status === 201)} acknowledged, ${count(rest, (a) => a.status === 503)} refused with 503 (${count(rest, (a) => a.status === 503 && a.phase === 'outage')} sent during the outage)`,
    `GraphQL creates: ${count(graphql, (a) => a.created !== undefined)} acknowledged, ${count(graphql, (a) => a.codes.includes(UNAVAILABLE))} database-unavailable; GraphQL reads: ${count(answers.graphqlReads, (a) => a.codes.includes(UNAVAILABLE))} of ${answers.graphqlReads.length} database-unavailable`,
    `/readyz: ${count(answers.readyz, (a) => a.status === 503)} of ${answers.readyz.length} answered 503; the slowest answer took ${Math.max(0, ...answers.readyz.map((a) => a.ms)).toFixed(0)} ms`,
  ].join('\n');
}
