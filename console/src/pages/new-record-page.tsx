import { useSession } from '../context.js';
import { href } from '../route.js';
import type { ResourceInfo } from '../schema.js';
import { PageHeading } from '../ui.js';
import { RecordForm } from './record-form.js';

/** `New <resource>`: POST /<resource>, then the new record's page. */
export function NewRecordPage({ resource }: { resource: ResourceInfo }) {
  const { api } = useSession();
  const create = async (body: Record<string, unknown>): Promise<void> => {
    const created = await api.call<{ id: number | string }>(`/${encodeURIComponent(resource.name)}`, { method: 'POST', body });
    location.hash = href.record(resource.name, created.body.id);
  };
  return (
    <>
      <p class="crumbs">
        <a href={href.list(resource.name)}>{resource.name}</a> /
      </p>
      <PageHeading>New {resource.singular}</PageHeading>
      {resource.fields.some((field) => field.type === 'file') && <p class="hint">Files are uploaded on the {resource.singular}'s page once it is created.</p>}
      <RecordForm resource={resource} submitLabel={`Create ${resource.singular}`} onSubmit={create} />
    </>
  );
}
