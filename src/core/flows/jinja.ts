/**
 * MINIMAL stand-in (the flows reader's helper ships the real Jinja subset): renders
 * `{{ expression }}` placeholders, where an expression is a dotted path into `variables`,
 * optionally followed by `.keys()` / `.values()` and `|join(<quoted separator>)`. Missing
 * values render as the empty string; other values as Python's `str()` would show them.
 */
export function renderTemplate(template: string, variables: Record<string, unknown>): string {
  return template.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_m, expression: string) =>
    show(evaluate(expression, variables)),
  );
}

function evaluate(expression: string, variables: Record<string, unknown>): unknown {
  const [head, ...filters] = expression.split('|').map((p) => p.trim());
  let value = lookup(head ?? '', variables);
  for (const filter of filters) {
    const join = /^join(?:\(\s*(?:'([^']*)'|"([^"]*)")?\s*\))?$/.exec(filter);
    if (join && Array.isArray(value)) {
      value = value.map(show).join(join[1] ?? join[2] ?? '');
    }
  }
  return value;
}

function lookup(path: string, variables: Record<string, unknown>): unknown {
  let value: unknown = variables;
  for (const part of path.split('.')) {
    if (value === null || value === undefined) return undefined;
    if (part === 'keys()' && typeof value === 'object') value = Object.keys(value);
    else if (part === 'values()' && typeof value === 'object') value = Object.values(value);
    else if (typeof value === 'object') value = (value as Record<string, unknown>)[part];
    else return undefined;
  }
  return value;
}

/** Python's `str()` of a value, as Jinja prints it. */
function show(value: unknown): string {
  if (value === undefined) return '';
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `[${value.map(repr).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{${entries.map(([k, v]) => `${repr(k)}: ${repr(v)}`).join(', ')}}`;
  }
  return typeof value === 'bigint' ? value.toString() : '';
}

function repr(value: unknown): string {
  return typeof value === 'string'
    ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
    : show(value);
}
