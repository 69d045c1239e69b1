import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DialogueError } from 'src/core';
import { readCredentialsFile } from './credentials';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'parley-cred-'));
  dirs.push(dir);
  const path = join(dir, 'credentials.yml');
  writeFileSync(path, text);
  return path;
}

describe('readCredentialsFile', () => {
  it('reads channel keys in file order, empty entries as null', () => {
    const read = readCredentialsFile(file('rest:\nsocketio:\n  session_persistence: true\n'));
    expect([...read.entries()]).toEqual([
      ['rest', null],
      ['socketio', { session_persistence: true }],
    ]);
  });

  it('configures nothing without a file, or with an empty one', () => {
    expect(readCredentialsFile(null).size).toBe(0);
    expect(readCredentialsFile(join(tmpdir(), 'no-such-dir-parley', 'credentials.yml')).size).toBe(
      0,
    );
    expect(readCredentialsFile(file('# nothing yet\n')).size).toBe(0);
  });

  it.each([
    ['rest: [\n', /is not valid YAML/],
    ['rest:\nrest:\n', /is not valid YAML: Map keys must be unique/],
    ['- rest\n', /must be a mapping from channel name to its settings/],
    ['socketio: true\n', /"socketio" must be a mapping of settings/],
  ])('rejects %j with CONFIG.INVALID naming the file', (text, message) => {
    const path = file(text);
    let error: unknown;
    try {
      readCredentialsFile(path);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DialogueError);
    expect((error as DialogueError).code).toBe('CONFIG.INVALID');
    expect((error as DialogueError).message).toMatch(message);
    expect((error as DialogueError).message).toContain(path);
  });
});
