import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { type ChannelCredentials, invalid } from 'src/modules/channels/credentials';
import { findUserModule, requireUserModule } from 'src/platform/modules/user-module';
import { channelName, type CustomChannel, type CustomChannelClass } from './custom-channel';

const NAME = /^[A-Za-z0-9_-]+$/;

/** A credentials.yml key naming a custom channel: `<module-path>.<ClassName>`. */
export const CUSTOM_KEY = /^(.+)\.([A-Za-z_$][\w$]*)$/;

/**
 * Loads `<module-path>.<ClassName>`: a dotted module path (`addons.my_channel.MyChannel` →
 * `addons/my_channel`) or a path with slashes (`./addons/my-channel.MyChannel`), resolved from
 * the working directory, then from the credentials file's folder, then as an installed package.
 * `reserved`: the built-in channel names a custom channel may not take.
 */
export function loadCustomChannel(
  file: string,
  key: string,
  settings: ChannelCredentials,
  cwd: string,
  reserved: readonly string[],
): CustomChannel {
  const match = CUSTOM_KEY.exec(key);
  const modulePath = match?.[1] ?? key;
  const className = match?.[2] ?? key;
  const asPath = modulePath.includes('/') ? modulePath : modulePath.replace(/\./g, '/');
  const candidates = isAbsolute(asPath)
    ? [asPath]
    : [resolve(cwd, asPath), resolve(dirname(resolve(file)), asPath)];
  let resolved: string | null = null;
  for (const candidate of candidates) {
    resolved = findUserModule(candidate);
    if (resolved !== null) break;
  }
  if (resolved === null && !modulePath.startsWith('.') && !isAbsolute(modulePath)) {
    try {
      resolved = require.resolve(modulePath, { paths: [cwd] });
    } catch {
      // reported below
    }
  }
  if (resolved === null) {
    throw invalid(
      file,
      key,
      `names a custom channel module that was not found (looked for ${candidates.map((c) => `${c}(.js|.ts)`).join(', ')}${existsSync(cwd) ? '' : '; working directory missing'})`,
    );
  }
  let exported: unknown;
  try {
    const mod = requireUserModule(resolved);
    exported = mod[className] ?? (mod.default as Record<string, unknown> | undefined)?.[className];
  } catch (e) {
    throw invalid(file, key, `custom channel module failed to load: ${(e as Error).message}`);
  }
  if (typeof exported !== 'function') {
    throw invalid(file, key, `custom channel module ${resolved} exports no class "${className}"`);
  }
  const cls = exported as CustomChannelClass;
  let channel: CustomChannel;
  try {
    channel =
      typeof cls.fromCredentials === 'function' ? cls.fromCredentials(settings) : new cls(settings);
  } catch (e) {
    throw invalid(
      file,
      key,
      `custom channel could not be built from its settings: ${(e as Error).message}`,
    );
  }
  let name: unknown;
  try {
    name = channel !== null && typeof channel === 'object' ? channelName(channel) : undefined;
  } catch (e) {
    throw invalid(file, key, `custom channel's name() failed: ${(e as Error).message}`);
  }
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw invalid(
      file,
      key,
      `custom channel needs a "name" (letters, digits, _ or -) for its URL /webhooks/<name>/webhook, got ${JSON.stringify(name)}`,
    );
  }
  if (reserved.includes(name)) {
    throw invalid(file, key, `custom channel name "${name}" is taken by a built-in channel`);
  }
  return channel;
}
