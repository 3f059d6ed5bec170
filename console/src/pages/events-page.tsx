import { useEffect, useRef, useState } from 'preact/hooks';
import { accessTo, useSession } from '../context.js';
import { compactJson, shortTime } from '../format.js';
import { EventTail, type StreamEvent } from '../event-tail.js';
import { resourceOfEventType } from '../schema.js';
import { PageHeading } from '../ui.js';

/** Events kept on the page, newest first. */
const KEEP = 200;

/**
 * A live tail of `/v1/events`: a type filter, Pause and Resume (which continues after the last
 * event seen, with Last-Event-ID, so nothing is missed), each event's type, id, time and object.
 */
export function EventsPage() {
  const { api, me, schema } = useSession();
  const readable = schema.eventTypes.filter((type) => {
    const resource = resourceOfEventType(schema, type);
    return resource !== undefined && accessTo(me, resource.name).read;
  });
  const [types, setTypes] = useState<string[]>([]);
  const [events, setEvents] = useState<StreamEvent[]>([]);
  const [status, setStatus] = useState('Connecting…');
  const [refused, setRefused] = useState<string | undefined>();
  const [paused, setPaused] = useState(false);
  const tail = useRef<EventTail | undefined>(undefined);
  const lastId = useRef<string | undefined>(undefined);

  useEffect(() => {
    if (paused) return;
    setRefused(undefined);
    setStatus('Connecting…');
    // A new filter continues from where the previous stream was, as a resume does.
    lastId.current = tail.current?.lastId ?? lastId.current;
    const started = new EventTail(
      api.authorization,
      types,
      {
        event: (event) => {
          lastId.current = event.id;
          setEvents((shown) => [event, ...shown].slice(0, KEEP));
        },
        status: setStatus,
        refused: (detail) => {
          setRefused(detail);
          setStatus('Stopped.');
        },
      },
      lastId.current,
    );
    tail.current = started;
    started.start(lastId.current === undefined ? 'start' : 'resume');
    return () => started.stop();
  }, [paused, types.join(',')]);

  const pause = (): void => {
    // The tail knows where the stream was (the server names its last event on connecting) even when no event came yet.
    lastId.current = tail.current?.lastId ?? lastId.current;
    setPaused(true);
    setStatus(`Paused${lastId.current === undefined ? '' : ` after event ${lastId.current}`}: Resume continues from there.`);
  };
  const toggle = (type: string, on: boolean): void => setTypes(on ? [...types, type] : types.filter((other) => other !== type));

  return (
    <>
      <PageHeading>Live events</PageHeading>
      <form class="panel" aria-labelledby="event-filter-title" onSubmit={(event) => event.preventDefault()}>
        <fieldset>
          <legend id="event-filter-title">Event types (none chosen: every event this token may read)</legend>
          <div class="checks">
            {readable.map((type) => (
              <label key={type} class="check">
                <input type="checkbox" checked={types.includes(type)} onInput={(event) => toggle(type, event.currentTarget.checked)} /> {type}
              </label>
            ))}
          </div>
        </fieldset>
        <div class="actions">
          {paused ? (
            <button type="button" onClick={() => setPaused(false)}>
              Resume
            </button>
          ) : (
            <button type="button" onClick={pause}>
              Pause
            </button>
          )}
          <button type="button" onClick={() => setEvents([])}>
            Clear
          </button>
        </div>
      </form>
      <p class="tail-status" role="status">
        {status}
      </p>
      {refused !== undefined && (
        <p class="error" role="alert">
          {refused}
        </p>
      )}
      <ol class="events" aria-label="Events, newest first">
        {events.map((event) => (
          <li key={event.id} class="event">
            <span class="event-type">{event.type}</span> <span class="event-id">#{event.id}</span> <time dateTime={event.timestamp}>{shortTime(event.timestamp)}</time>
            <code class="json">{compactJson(event.data.object, 300)}</code>
          </li>
        ))}
      </ol>
    </>
  );
}
