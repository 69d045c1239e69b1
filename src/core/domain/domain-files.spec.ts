import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Domain } from 'src/core/domain/domain';
import { readDomainPath } from 'src/core/domain/domain-files';

/** Rasa's `Domain.from_directory`: every YAML domain file of a directory, merged. */
describe('readDomainPath', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-domain-dir-'));
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('merges the domain files of a directory and its subdirectories, leaving other YAML out', async () => {
    writeFileSync(
      join(dir, 'a.yml'),
      'version: "3.1"\nintents: [greet]\nresponses:\n  utter_greet:\n    - text: Hi\nactions: [utter_greet]\n',
    );
    mkdirSync(join(dir, 'more'));
    writeFileSync(
      join(dir, 'more', 'b.yaml'),
      'intents: [greet, bye]\nresponses:\n  utter_bye:\n    - text: Bye\nactions:\n  - action_x:\n      send_domain: true\nslots:\n  name:\n    type: text\n    mappings:\n      - type: from_text\n',
    );
    writeFileSync(join(dir, 'notes.yml'), 'nlu:\n  - intent: greet\n    examples: "- hi"\n');
    const read = await readDomainPath(dir);
    expect(read.files).toEqual([join(dir, 'a.yml'), join(dir, 'more', 'b.yaml')]);
    const domain = Domain.fromYaml(read.text, dir);
    expect(domain.intents).toEqual(expect.arrayContaining(['greet', 'bye']));
    expect(domain.intents.filter((i) => i === 'greet')).toHaveLength(1);
    expect(Object.keys(domain.responses).sort()).toEqual(['utter_bye', 'utter_greet']);
    expect(domain.customActions).toContain('action_x');
    expect(domain.slots.map((s) => s.name)).toContain('name');
  });

  it('reads a single file as it is', async () => {
    const file = join(dir, 'domain.yml');
    writeFileSync(file, 'version: "3.1"\nintents: [greet]\n');
    expect((await readDomainPath(file)).text).toBe('version: "3.1"\nintents: [greet]\n');
  });

  it('fails on a directory without a domain file', async () => {
    writeFileSync(join(dir, 'nlu.yml'), 'nlu: []\n');
    await expect(readDomainPath(dir)).rejects.toThrow('holds no domain file');
  });
});
