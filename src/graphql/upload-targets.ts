import {
  Kind,
  TypeInfo,
  getNamedType,
  getNullableType,
  isInputObjectType,
  isListType,
  typeFromAST,
  visit,
  visitWithTypeInfo,
  type FieldNode,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { BadRequestError } from '../errors.js';
import type { FieldModel, ResourceModel } from '../schema/schema-model.js';
import { UploadScalar, type FileInputExtension, type WriteMutationExtension } from './upload-inputs.js';

/**
 * Where the files of a GraphQL multipart request go, read from the operation before any file is
 * stored: each `map` path names a variable position of type `Upload` inside a file field's input,
 * in the arguments of one create, update or replace mutation. What a file may be (its field's
 * maxSize and accept) and who may send it are then known before its first byte is read.
 */

/** One file's destination. */
export interface UploadTarget {
  resource: ResourceModel;
  field: FieldModel;
  /** The mutation writing it, when the variable is used in one's arguments (not in a fragment). */
  write: (WriteMutationExtension & { id: unknown }) | undefined;
  /** The list the file is an item of (a `multiple` field's), to count its files. */
  list: string | undefined;
}

/** Where a variable is used: its mutation field, and the file field's input it is the value of (when it is one directly). */
interface VariableUse {
  mutation: FieldNode;
  fileInput: FileInputExtension | undefined;
}

/** The target of each path (`variables.input.avatar`, `variables.files.1`); a path that is not an Upload of a file field is a 400. */
export function uploadTargets(schema: GraphQLSchema, operation: OperationDefinitionNode, variables: Readonly<Record<string, unknown>>, paths: readonly string[]): Map<string, UploadTarget> {
  const uses = variableUses(schema, operation);
  const targets = new Map<string, UploadTarget>();
  for (const path of paths) targets.set(path, targetOf(schema, operation, variables, uses, path));
  return targets;
}

function targetOf(schema: GraphQLSchema, operation: OperationDefinitionNode, variables: Readonly<Record<string, unknown>>, uses: Map<string, VariableUse[]>, path: string): UploadTarget {
  const refuse = (why: string): BadRequestError => new BadRequestError(`The map path ${path.slice(0, 200)} ${why}; a file goes at a variable position of type Upload, in the input of a file field of a create, update or replace mutation.`);
  const [root, name, ...rest] = path.split('.');
  if (root !== 'variables' || name === undefined) throw refuse('does not start with "variables." and a variable name (several operations in one request are not taken)');
  const definition = operation.variableDefinitions?.find((v) => v.variable.name.value === name);
  let type: GraphQLInputType | undefined = definition === undefined ? undefined : (typeFromAST(schema, definition.type) as GraphQLInputType | undefined);
  if (type === undefined) throw refuse(`names no variable of the operation ($${name.slice(0, 100)} is not declared)`);
  const variableUses = uses.get(name) ?? [];
  if (variableUses.length > 1) throw refuse(`is in $${name}, which the operation uses more than once (each file is written to one place)`);
  let fileInput = variableUses[0]?.fileInput;
  let list: string | undefined;
  let at = `variables.${name}`;
  for (const segment of rest) {
    const nullable: GraphQLInputType = getNullableType(type);
    if (isListType(nullable) && /^(0|[1-9][0-9]{0,5})$/.test(segment)) {
      list = at;
      type = nullable.ofType;
    } else if (isInputObjectType(nullable) && Object.hasOwn(nullable.getFields(), segment)) {
      const field: GraphQLInputField | undefined = nullable.getFields()[segment];
      fileInput = field?.extensions.restgraphFile as FileInputExtension | undefined;
      type = field?.type;
    } else {
      throw refuse(`goes where the variable's type has no position ${segment.slice(0, 100)}`);
    }
    if (type === undefined) throw refuse(`goes where the variable's type has no position ${segment.slice(0, 100)}`);
    at = `${at}.${segment}`;
  }
  if (getNullableType(type) !== UploadScalar) throw refuse(`is a position of type ${String(type)}, not Upload`);
  if (fileInput === undefined) throw refuse(`is in $${name}, which the operation uses nowhere a file field takes it (fragments are not followed)`);
  const mutation = variableUses[0]?.mutation;
  const write = mutation === undefined ? undefined : writeOf(schema, mutation, variables);
  return { resource: fileInput.resource, field: fileInput.field, write, list };
}

/** The write a mutation field makes, and its `id` argument as given (a literal or a variable's value). */
function writeOf(schema: GraphQLSchema, node: FieldNode, variables: Readonly<Record<string, unknown>>): UploadTarget['write'] {
  const extension = schema.getMutationType()?.getFields()[node.name.value]?.extensions.restgraphWrite as WriteMutationExtension | undefined;
  if (extension === undefined) return undefined;
  const argument = node.arguments?.find((a) => a.name.value === 'id')?.value;
  const id = argument === undefined ? undefined : argument.kind === Kind.VARIABLE ? variables[argument.name.value] : argument.kind === Kind.STRING || argument.kind === Kind.INT ? argument.value : undefined;
  return { ...extension, id };
}

/** Every use of each variable in the operation's own selections: the top-level field it is in, and the file field input it is the value of. */
function variableUses(schema: GraphQLSchema, operation: OperationDefinitionNode): Map<string, VariableUse[]> {
  const uses = new Map<string, VariableUse[]>();
  const typeInfo = new TypeInfo(schema);
  const inputs: (FileInputExtension | undefined)[] = [];
  let depth = 0;
  let mutation: FieldNode | undefined;
  visit(
    operation,
    visitWithTypeInfo(typeInfo, {
      Field: {
        enter(node) {
          if (depth++ === 0) mutation = node;
        },
        leave() {
          depth--;
        },
      },
      ObjectField: {
        enter(node) {
          inputs.push(fileInputOf(typeInfo.getParentInputType(), node.name.value));
        },
        leave() {
          inputs.pop();
        },
      },
      Variable(node) {
        // Before the first field: a definition, not a use.
        if (mutation === undefined) return;
        const name = node.name.value;
        uses.set(name, [...(uses.get(name) ?? []), { mutation, fileInput: inputs[inputs.length - 1] }]);
      },
    }),
  );
  return uses;
}

/** The file field an input object's field leads to, if it is one. */
function fileInputOf(parent: GraphQLInputType | null | undefined, name: string): FileInputExtension | undefined {
  const named = parent === null || parent === undefined ? undefined : getNamedType(parent);
  return isInputObjectType(named) ? (named.getFields()[name]?.extensions.restgraphFile as FileInputExtension | undefined) : undefined;
}
