import { describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { keyFields, parseRecordId, recordId, recordKeyParts } from '../src/schema/record-key.js';

const schema = parseSchemaText(`
database: {existing: true}
resources:
  film_actor:
    key: [actor_id, film_id]
    fields:
      actor_id: {type: integer, required: true}
      film_id: {type: integer, format: int64, required: true}
  country:
    key: [country_code]
    fields:
      country_code: {type: string, required: true}
  rental:
    key: [rental_id]
    fields:
      rental_id: {type: string, format: uuid, generated: uuid}
  tag:
    key: [owner, label]
    fields:
      owner: {type: string, required: true}
      label: {type: string, required: true}
  posts_view:
    readOnly: true
    fields:
      title: {type: string}
`);
const resource = (name: string) => {
  const found = schema.resources.get(name);
  if (found === undefined) throw new Error(name);
  return found;
};

describe('record names', () => {
  it('names a composite key by its parts in key order, as in a URL', () => {
    const filmActor = resource('film_actor');
    expect(keyFields(filmActor)).toEqual(['actor_id', 'film_id']);
    expect(recordId(filmActor, { film_id: 23, actor_id: 1 })).toBe('1,23');
    expect(parseRecordId(filmActor, '1,23')).toBe('1,23');
    expect(recordKeyParts(filmActor, '1,23')).toEqual([1, 23]);
  });

  it('keeps int64 parts beyond 2^53 as digits, and refuses what is not a key', () => {
    const filmActor = resource('film_actor');
    expect(parseRecordId(filmActor, '1,9007199254740993')).toBe('1,9007199254740993');
    expect(recordKeyParts(filmActor, '1,9007199254740993')).toEqual([1, '9007199254740993']);
    for (const bad of ['1', '1,2,3', 'a,2', '1,99999999999999999999', '1,', '1.5,2', '01,2']) expect(parseRecordId(filmActor, bad)).toBeUndefined();
  });

  it('percent-encodes a text part holding a comma, so the name splits back into its parts', () => {
    const tag = resource('tag');
    const id = recordId(tag, { owner: 'a,b', label: '100%' });
    expect(id).toBe('a%2Cb,100%25');
    expect(parseRecordId(tag, id as string)).toBe(id);
    expect(recordKeyParts(tag, id as string)).toEqual(['a,b', '100%']);
  });

  it('names single keys by their value: text as it is, uuids in lower case', () => {
    expect(parseRecordId(resource('country'), 'FR')).toBe('FR');
    expect(parseRecordId(resource('rental'), 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11')).toBe('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
  });

  it('names no record of a resource without a key, and keeps id for the tables restgraph creates', () => {
    expect(keyFields(resource('posts_view'))).toEqual([]);
    expect(parseRecordId(resource('posts_view'), '1')).toBeUndefined();
    const own = parseSchemaText('resources:\n  posts:\n    fields:\n      title: {type: string}\n').resources.get('posts');
    if (own === undefined) throw new Error('posts');
    expect(keyFields(own)).toEqual(['id']);
    expect(recordId(own, { id: 7 })).toBe(7);
    expect(parseRecordId(own, '7')).toBe(7);
  });
});
