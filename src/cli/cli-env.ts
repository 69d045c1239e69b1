/** Options of `parley run`, as commander hands them over. */
export interface RunOptions {
  port?: string;
  enableApi?: boolean;
  authToken?: string;
  jwtSecret?: string;
  jwtMethod?: string;
  cors?: string[];
  credentials?: string;
  endpoints?: string;
  model?: string;
  domain?: string;
  remoteStorage?: string;
  inspect?: boolean;
  logLevel?: string;
}

/** Maps CLI flags onto the environment variable names, so one validator checks both. */
export function runOptionsToEnv(opts: RunOptions): Record<string, string> {
  const env: Record<string, string> = {};
  const set = (key: string, value: string | undefined): void => {
    if (value !== undefined) env[key] = value;
  };
  set('PORT', opts.port);
  if (opts.enableApi) env.PARLEY_ENABLE_API = 'true';
  set('PARLEY_AUTH_TOKEN', opts.authToken);
  set('JWT_SECRET', opts.jwtSecret);
  set('JWT_METHOD', opts.jwtMethod);
  if (opts.cors !== undefined) env.PARLEY_CORS = opts.cors.join(',');
  set('PARLEY_CREDENTIALS', opts.credentials);
  set('PARLEY_ENDPOINTS', opts.endpoints);
  set('PARLEY_MODEL', opts.model);
  set('PARLEY_DOMAIN', opts.domain);
  set('PARLEY_REMOTE_STORAGE', opts.remoteStorage);
  if (opts.inspect) env.PARLEY_INSPECT = 'true';
  set('LOG_LEVEL', opts.logLevel);
  return env;
}
