import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

export interface IdeAsset {
  readonly contentType: string;
  readonly body: Buffer;
}

/** Files of the IDE page, read from node_modules once: nothing is loaded from a CDN. */
export function loadIdeAssets(script: string): ReadonlyMap<string, IdeAsset> {
  const js = 'text/javascript; charset=utf-8';
  const file = (path: string, contentType: string): IdeAsset => ({
    contentType,
    body: readFileSync(path),
  });
  return new Map([
    [
      'react.production.min.js',
      file(join(packageDir('react'), 'umd', 'react.production.min.js'), js),
    ],
    [
      'react-dom.production.min.js',
      file(join(packageDir('react-dom'), 'umd', 'react-dom.production.min.js'), js),
    ],
    ['graphiql.min.js', file(join(packageDir('graphiql'), 'graphiql.min.js'), js)],
    [
      'graphiql.min.css',
      file(join(packageDir('graphiql'), 'graphiql.min.css'), 'text/css; charset=utf-8'),
    ],
    ['ide.js', { contentType: js, body: Buffer.from(script) }],
  ]);
}
