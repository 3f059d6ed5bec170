import { useEffect, useState } from 'preact/hooks';
import { ApiError, describeError } from '../api.js';
import { useSession } from '../context.js';
import { href } from '../route.js';
import { ErrorMessage, PageHeading } from '../ui.js';

interface ServiceIndex {
  name: string;
  versions: string[];
  latestVersion: string;
  resources: Record<string, string>;
  /** Told to admins only. */
  server?: { version: string; database: string };
}

/** The service: restgraph's version and database (admins), the API versions and resources, and `/readyz`. */
export function StatusPage() {
  const { api } = useSession();
  const [index, setIndex] = useState<ServiceIndex | undefined>();
  const [error, setError] = useState<unknown>();
  const [ready, setReady] = useState<string>('checking…');
  const check = async (): Promise<void> => {
    setReady('checking…');
    try {
      const answer = await api.get<{ status: string }>('/readyz');
      setReady(`${answer.status} (200)`);
    } catch (failure) {
      setReady(failure instanceof ApiError ? `not ready: ${describeError(failure)}` : describeError(failure));
    }
  };
  useEffect(() => {
    api.get<ServiceIndex>('/').then(setIndex, setError);
    void check();
  }, []);
  return (
    <>
      <PageHeading>Status</PageHeading>
      <ErrorMessage error={error} />
      <dl class="record">
        <div>
          <dt>restgraph version</dt>
          <dd>{index?.server?.version ?? 'shown to admins only'}</dd>
        </div>
        <div>
          <dt>database</dt>
          <dd>{index?.server?.database ?? 'shown to admins only'}</dd>
        </div>
        <div>
          <dt>API versions</dt>
          <dd>{index === undefined ? '…' : `${index.versions.join(', ')} (latest ${index.latestVersion})`}</dd>
        </div>
        <div>
          <dt>resources</dt>
          <dd>
            {index === undefined
              ? '…'
              : Object.keys(index.resources).map((name, i) => (
                  <span key={name}>
                    {i > 0 && ', '}
                    <a href={href.list(name)}>{name}</a>
                  </span>
                ))}
          </dd>
        </div>
        <div>
          <dt>
            <a href="/readyz">/readyz</a>
          </dt>
          <dd>
            <span role="status">{ready}</span>{' '}
            <button type="button" onClick={() => void check()}>
              Check again
            </button>
          </dd>
        </div>
      </dl>
      <h2>Elsewhere on this server</h2>
      <ul>
        <li>
          <a href="/graphql">GraphiQL</a>: the GraphQL API in the browser
        </li>
        <li>
          <a href="/docs">API reference</a>: the OpenAPI document in Swagger UI (<a href="/openapi.json">/openapi.json</a>)
        </li>
      </ul>
    </>
  );
}
