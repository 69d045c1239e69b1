import { DialogueError } from 'src/core/errors/dialogue-error';
import { cloneJson, isJsonObject, jsonEqual } from 'src/core/events/json-values';

/** One RFC 6902 operation. */
interface PatchOperation {
  readonly op: string;
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}

function patchError(message: string): never {
  throw new DialogueError('TRACKER.CONVERSATION_ERROR', `Invalid stack update: ${message}`);
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) patchError(`'${pointer}' is not a JSON pointer`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = unknown[] | Record<string, unknown>;

function childOf(container: unknown, token: string): unknown {
  if (Array.isArray(container)) {
    const i = Number(token);
    if (!/^\d+$/.test(token) || i >= container.length) patchError(`no index '${token}'`);
    return container[i];
  }
  if (isJsonObject(container)) {
    if (!Object.prototype.hasOwnProperty.call(container, token)) patchError(`no member '${token}'`);
    return container[token];
  }
  return patchError(`cannot descend into a scalar at '${token}'`);
}

/** The parent container and last token of a pointer (which must not be the root). */
function locate(root: unknown, pointer: string): { parent: Container; key: string } {
  const tokens = parsePointer(pointer);
  const key = tokens.pop();
  if (key === undefined) return patchError('the document root cannot be the target');
  let node = root;
  for (const t of tokens) node = childOf(node, t);
  if (!Array.isArray(node) && !isJsonObject(node)) patchError(`'${pointer}' has no container`);
  return { parent: node, key };
}

function get(root: unknown, pointer: string): unknown {
  let node = root;
  for (const t of parsePointer(pointer)) node = childOf(node, t);
  return node;
}

function add(root: unknown, pointer: string, value: unknown): void {
  const { parent, key } = locate(root, pointer);
  if (Array.isArray(parent)) {
    const index = key === '-' ? parent.length : Number(key);
    if (key !== '-' && (!/^\d+$/.test(key) || index > parent.length)) {
      patchError(`bad index '${key}'`);
    }
    parent.splice(index, 0, value);
  } else {
    parent[key] = value;
  }
}

function remove(root: unknown, pointer: string): unknown {
  const { parent, key } = locate(root, pointer);
  const old = childOf(parent, key);
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
  return old;
}

/** Replaces an existing member in place: an object keeps its key order (as Python's dicts do). */
function replace(root: unknown, pointer: string, value: unknown): void {
  const { parent, key } = locate(root, pointer);
  childOf(parent, key);
  if (Array.isArray(parent)) parent[Number(key)] = value;
  else parent[key] = value;
}

/**
 * Applies a JSON-Patch list to a JSON document (the dialogue stack) and returns the new document;
 * the input is not modified. Supports add, remove, replace, move, copy and test.
 */
export function applyJsonPatch(document: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) patchError('the update must be a list of operations');
  let root: unknown = cloneJson(document);
  for (const raw of patch) {
    if (!isJsonObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      patchError(`malformed operation ${JSON.stringify(raw)}`);
    }
    const op = raw as unknown as PatchOperation;
    const value = cloneJson(op.value);
    if (op.path === '' && (op.op === 'add' || op.op === 'replace')) {
      root = value;
      continue;
    }
    switch (op.op) {
      case 'add':
        add(root, op.path, value);
        break;
      case 'remove':
        remove(root, op.path);
        break;
      case 'replace':
        replace(root, op.path, value);
        break;
      case 'move': {
        if (typeof op.from !== 'string') patchError("'move' needs 'from'");
        add(root, op.path, remove(root, op.from));
        break;
      }
      case 'copy': {
        if (typeof op.from !== 'string') patchError("'copy' needs 'from'");
        add(root, op.path, cloneJson(get(root, op.from)));
        break;
      }
      case 'test':
        if (!jsonEqual(get(root, op.path), value)) patchError(`test failed at '${op.path}'`);
        break;
      default:
        patchError(`unknown operation '${op.op}'`);
    }
  }
  return root;
}
