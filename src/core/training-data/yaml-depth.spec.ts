import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DialogueError } from 'src/core/errors/dialogue-error';
import {
  MAX_YAML_DEPTH,
  parseYamlSource,
  yamlDeeperThan,
} from 'src/core/training-data/yaml-source';

const ROOT = join(__dirname, '..', '..', '..');

function yamlFiles(dir: string, found: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yamlFiles(path, found);
    else if (/\.ya?ml$/.test(name)) found.push(path);
  }
  return found;
}

describe('YAML nesting bound', () => {
  it('passes every YAML file of the examples and test fixtures', () => {
    const files = [...yamlFiles(join(ROOT, 'examples')), ...yamlFiles(join(ROOT, 'test'))];
    expect(files.length).toBeGreaterThan(10);
    const refused = files.filter((f) => yamlDeeperThan(readFileSync(f, 'utf8'), MAX_YAML_DEPTH));
    expect(refused).toEqual([]);
  });

  it('passes nesting up to the limit and refuses one level more', () => {
    const flow = (n: number): string => `nlu: ${'['.repeat(n - 1)}${']'.repeat(n - 1)}`;
    expect(yamlDeeperThan(flow(MAX_YAML_DEPTH), MAX_YAML_DEPTH)).toBe(false);
    expect(yamlDeeperThan(flow(MAX_YAML_DEPTH + 1), MAX_YAML_DEPTH)).toBe(true);
  });

  it.each([
    ['flow sequences', `${'['.repeat(100_000)}${']'.repeat(100_000)}`],
    ['flow mappings', `${'{a: '.repeat(10_000)}1${'}'.repeat(10_000)}`],
    ['unclosed flow', '['.repeat(60_000)],
    ['compact sequences', `${'- '.repeat(10_000)}x`],
    [
      'indentation',
      Array.from({ length: 200 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' x',
    ],
  ])('refuses deeply nested %s before parsing, naming the bound', (_, text) => {
    expect(yamlDeeperThan(text, MAX_YAML_DEPTH)).toBe(true);
    let error: unknown;
    try {
      parseYamlSource(text, 'request body');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DialogueError);
    expect((error as DialogueError).code).toBe('TRAINING_DATA.INVALID');
    expect((error as DialogueError).message).toContain(`limit of ${MAX_YAML_DEPTH} levels`);
  });

  it('does not count brackets inside quotes, comments and plain text', () => {
    const text = [
      'nlu:',
      '- intent: greet',
      '  examples: |',
      `    - hello ${'['.repeat(200)}`,
      `    - "${'{'.repeat(200)}"`,
      `# ${'['.repeat(200)}`,
      `- text: "${'['.repeat(200)}"`,
      `- text: '${'{'.repeat(200)}'`,
      '',
    ].join('\n');
    expect(yamlDeeperThan(text, MAX_YAML_DEPTH)).toBe(false);
  });
});
