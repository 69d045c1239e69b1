import { readFileSync } from 'node:fs';
import { join } from 'node:path';

function readVersion(): string {
  // dist/platform/config → package.json is three levels up (src/… in tests, dist/… when built).
  const pkg = JSON.parse(
    readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8'),
  ) as {
    version: string;
  };
  return pkg.version;
}

/** Parley's own version, from package.json. */
export const PARLEY_VERSION = readVersion();

/** The oldest Parley version whose model archives this version can load. */
export const MINIMUM_COMPATIBLE_VERSION = '0.1.0';

/** Version of the REST interface, carried by every failure body (spec: "1.0.0"). */
export const REST_API_VERSION = '1.0.0';
