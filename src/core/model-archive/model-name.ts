import { randomInt } from 'node:crypto';
import { DialogueError } from 'src/core/errors/dialogue-error';

/** File suffix of every model archive. */
export const MODEL_ARCHIVE_SUFFIX = '.tar.gz';

const ADJECTIVES: readonly string[] = `
  agile amber ancient azure bold brave bright brisk calm clever coral crisp curious daring
  eager early fancy fast fierce gentle glad golden grand green happy honest humble jolly
  keen kind lively loyal lucky mellow merry mighty modest noble patient polite proud quick
  quiet rapid ruby shiny silent smart steady sunny swift tidy tranquil vivid warm wise witty
  young zesty zen
`
  .trim()
  .split(/\s+/);

const NOUNS: readonly string[] = `
  anchor badger beacon birch breeze brook canyon cedar cloud comet coyote crane delta dune
  eagle ember falcon fern fjord forest galaxy glacier harbor hawk heron island lagoon
  lantern maple meadow meteor moose nebula oak ocean orbit otter panda pebble pine prairie
  quartz raven reef river robin sequoia shore sparrow spruce summit thunder tiger tundra
  valley walrus willow wolf yak zebra
`
  .trim()
  .split(/\s+/);

function pick<T>(list: readonly T[]): T {
  const item = list[randomInt(list.length)];
  if (item === undefined) throw new Error('empty word list');
  return item;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/**
 * Rasa-style archive name `YYYYMMDD-HHMMSS-<adjective>-<noun>.tar.gz`. Rasa formats the local
 * time (`time.strftime`); Parley uses **UTC** so that names sort the same on every host.
 */
export function generateModelName(trainedAt: Date): string {
  const date = `${trainedAt.getUTCFullYear()}${pad(trainedAt.getUTCMonth() + 1)}${pad(trainedAt.getUTCDate())}`;
  const time = `${pad(trainedAt.getUTCHours())}${pad(trainedAt.getUTCMinutes())}${pad(trainedAt.getUTCSeconds())}`;
  return `${date}-${time}-${pick(ADJECTIVES)}-${pick(NOUNS)}${MODEL_ARCHIVE_SUFFIX}`;
}

/**
 * The archive file name for a fixed model name (Rasa `--fixed-model-name`): `.tar.gz` is
 * appended when missing. Names with path separators, `.`/`..`, control characters or more than
 * 255 bytes are refused with `MODEL.INVALID_NAME`.
 */
export function fixedModelFileName(name: string): string {
  const fail = (problem: string): never => {
    throw new DialogueError(
      'MODEL.INVALID_NAME',
      `Invalid fixed model name ${JSON.stringify(name)}: ${problem}`,
      { name, problem },
    );
  };
  if (name.trim() === '') fail('the name is empty');
  if (name.includes('/') || name.includes('\\')) fail('the name contains a path separator');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) fail('the name contains control characters');
  if (/^[A-Za-z]:/.test(name)) fail('the name contains a drive letter');
  const fileName = name.endsWith(MODEL_ARCHIVE_SUFFIX) ? name : `${name}${MODEL_ARCHIVE_SUFFIX}`;
  const stem = fileName.slice(0, -MODEL_ARCHIVE_SUFFIX.length);
  if (stem === '' || stem === '.' || stem === '..') fail('the name has no stem');
  if (stem.startsWith('.')) fail('the name must not start with a dot');
  if (Buffer.byteLength(fileName, 'utf8') > 255) fail('the name is longer than 255 bytes');
  return fileName;
}
