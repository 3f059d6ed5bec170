import { useState } from 'preact/hooks';
import { usableInQueries } from '../field-access.js';
import { OPERATORS, type FieldInfo, type ResourceInfo } from '../schema.js';

/** A filter as a query parameter: `name=Alice` (eq) or `name[startsWith]=A`. */
export interface Filter {
  parameter: string;
  value: string;
}

/** The parts of a filter parameter (`price[lt]` → price, lt). */
export function filterParts(parameter: string): { field: string; operator: string } {
  const match = /^(.*)\[(\w+)\]$/.exec(parameter);
  return match?.[1] !== undefined && match[2] !== undefined ? { field: match[1], operator: match[2] } : { field: parameter, operator: 'eq' };
}

function ValueInput({ field, operator, value, onInput }: { field: FieldInfo; operator: string; value: string; onInput: (value: string) => void }) {
  const common = { id: 'filter-value', value, onInput: (event: Event) => onInput((event.currentTarget as HTMLInputElement | HTMLSelectElement).value) };
  if (operator === 'isNull' || (field.type === 'boolean' && operator !== 'in')) {
    return (
      <select {...common}>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  }
  if (field.type === 'enum' && operator !== 'in') {
    return (
      <select {...common}>
        {(field.enumValues ?? []).map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    );
  }
  if (operator !== 'in' && field.type === 'date') return <input {...common} type="date" />;
  if (operator !== 'in' && (field.type === 'integer' || field.type === 'number')) return <input {...common} type="number" step={field.type === 'number' ? 'any' : '1'} />;
  return <input {...common} type="text" placeholder={operator === 'in' ? 'a,b,c' : field.type === 'datetime' ? '2026-11-01T10:00:00Z' : undefined} />;
}

/** Adds a filter on one field with one of its type's operators (docs/list-queries.md). */
export function FilterBar({ resource, onAdd }: { resource: ResourceInfo; onAdd: (filter: Filter) => void }) {
  // A field the token reads only on some rows cannot be filtered by (a 403).
  const usable = resource.fields.filter(usableInQueries);
  const [fieldName, setFieldName] = useState(usable[0]?.name ?? 'id');
  const field = usable.find((candidate) => candidate.name === fieldName) ?? usable[0];
  const operators = field === undefined ? [] : OPERATORS[field.type];
  const [operator, setOperator] = useState('eq');
  const [value, setValue] = useState('');
  if (field === undefined) return null;
  const chosenOperator = operators.includes(operator) ? operator : (operators[0] ?? 'eq');
  const firstValue = chosenOperator === 'isNull' || field.type === 'boolean' ? 'true' : field.type === 'enum' && chosenOperator !== 'in' ? (field.enumValues?.[0] ?? '') : '';
  const chooseField = (name: string): void => {
    setFieldName(name);
    setValue('');
  };
  const chooseOperator = (name: string): void => {
    setOperator(name);
    setValue('');
  };
  const submit = (event: Event): void => {
    event.preventDefault();
    const chosen = value === '' ? firstValue : value;
    onAdd({ parameter: chosenOperator === 'eq' ? field.name : `${field.name}[${chosenOperator}]`, value: chosen });
    setValue('');
  };
  return (
    <form class="filter-bar" onSubmit={submit} aria-label="Add a filter">
      <div>
        <label for="filter-field">Field</label>
        <select id="filter-field" value={field.name} onInput={(event) => chooseField(event.currentTarget.value)}>
          {usable.map((candidate) => (
            <option key={candidate.name} value={candidate.name}>
              {candidate.name}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="filter-operator">Operator</label>
        <select id="filter-operator" value={chosenOperator} onInput={(event) => chooseOperator(event.currentTarget.value)}>
          {operators.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="filter-value">Value</label>
        <ValueInput field={field} operator={chosenOperator} value={value === '' ? firstValue : value} onInput={setValue} />
      </div>
      <button type="submit">Add filter</button>
    </form>
  );
}
