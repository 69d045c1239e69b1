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

function isContainer(value: unknown): value is Container {
  return Array.isArray(value) || isJsonObject(value);
}

/**
 * Copy-on-write over one patch: containers on the path of a change are copied once (shallow),
 * the rest of the document is shared with the input, which stays unchanged. A patch of a
 * frame's step id copies the stack list and that frame, not the whole stack.
 */
class Writable {
  private readonly own = new Set<unknown>();
  root: unknown;

  constructor(document: unknown) {
    this.root = isContainer(document) ? this.copy(document) : cloneJson(document);
  }

  private copy(container: Container): Container {
    const copy = Array.isArray(container) ? container.slice() : { ...container };
    this.own.add(copy);
    return copy;
  }

  /** The parent container (writable) and last token of a pointer (not the root). */
  locate(pointer: string): { parent: Container; key: string } {
    const tokens = parsePointer(pointer);
    const key = tokens.pop();
    if (key === undefined) return patchError('the document root cannot be the target');
    let node = this.root;
    for (const t of tokens) {
      const child = childOf(node, t);
      if (isContainer(child) && !this.own.has(child)) {
        const copy = this.copy(child);
        if (Array.isArray(node)) node[Number(t)] = copy;
        else (node as Record<string, unknown>)[t] = copy;
        node = copy;
      } else {
        node = child;
      }
    }
    if (!isContainer(node)) patchError(`'${pointer}' has no container`);
    return { parent: node, key };
  }
}

function get(root: unknown, pointer: string): unknown {
  let node = root;
  for (const t of parsePointer(pointer)) node = childOf(node, t);
  return node;
}

function add(doc: Writable, pointer: string, value: unknown): void {
  const { parent, key } = doc.locate(pointer);
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

function remove(doc: Writable, pointer: string): unknown {
  const { parent, key } = doc.locate(pointer);
  const old = childOf(parent, key);
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
  return old;
}

/** Replaces the value in place: an object keeps its key order (Rasa's jsonpatch does). */
function replace(doc: Writable, pointer: string, value: unknown): void {
  const { parent, key } = doc.locate(pointer);
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
  const doc = new Writable(document);
  for (const raw of patch) {
    if (!isJsonObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      patchError(`malformed operation ${JSON.stringify(raw)}`);
    }
    const op = raw as unknown as PatchOperation;
    const value = cloneJson(op.value);
    if (op.path === '' && (op.op === 'add' || op.op === 'replace')) {
      doc.root = value;
      continue;
    }
    switch (op.op) {
      case 'add':
        add(doc, op.path, value);
        break;
      case 'remove':
        remove(doc, op.path);
        break;
      case 'replace':
        replace(doc, op.path, value);
        break;
      case 'move': {
        if (typeof op.from !== 'string') patchError("'move' needs 'from'");
        add(doc, op.path, remove(doc, op.from));
        break;
      }
      case 'copy': {
        if (typeof op.from !== 'string') patchError("'copy' needs 'from'");
        add(doc, op.path, cloneJson(get(doc.root, op.from)));
        break;
      }
      case 'test':
        if (!jsonEqual(get(doc.root, op.path), value)) patchError(`test failed at '${op.path}'`);
        break;
      default:
        patchError(`unknown operation '${op.op}'`);
    }
  }
  return doc.root;
}
