import { validateEnv } from 'src/platform/config/validate-env';

describe('validateEnv: speech engine keys', () => {
  it("reads the Azure key under Rasa's name, AZURE_SPEECH_API_KEY", () => {
    expect(validateEnv({ AZURE_SPEECH_API_KEY: 'rasa-name' }).speechKeys?.azureKey).toBe(
      'rasa-name',
    );
  });

  it('falls back to AZURE_SPEECH_KEY, also when the Rasa name is present but empty', () => {
    expect(validateEnv({ AZURE_SPEECH_KEY: 'k' }).speechKeys?.azureKey).toBe('k');
    expect(
      validateEnv({ AZURE_SPEECH_API_KEY: '', AZURE_SPEECH_KEY: 'k' }).speechKeys?.azureKey,
    ).toBe('k');
    expect(validateEnv({}).speechKeys?.azureKey).toBeNull();
  });
});

describe('validateEnv: protection of the service', () => {
  it('defaults: 10 s action timeout, breaker on, 24 h keys, no rate limits, no trusted proxy', () => {
    const c = validateEnv({});
    expect(c.dialogue.actionTimeoutMs).toBe(10_000);
    expect(c.dialogue.actionCircuit).toEqual({
      failureRatio: 0.5,
      minimumCalls: 10,
      windowMs: 10_000,
      halfOpenAfterMs: 30_000,
    });
    expect(c.idempotency.retentionMs).toBe(86_400_000);
    expect(c.rateLimit).toMatchObject({ perClient: 0, perConversation: 0, redisUrl: null });
    expect(c.trustProxy).toBe(false);
  });

  it('keeps idle connections 65 s by default, and refuses a keep-alive timeout below 1 s', () => {
    expect(validateEnv({}).http.keepAliveTimeoutMs).toBe(65_000);
    expect(validateEnv({ PARLEY_KEEP_ALIVE_TIMEOUT_MS: '120000' }).http.keepAliveTimeoutMs).toBe(
      120_000,
    );
    expect(() => validateEnv({ PARLEY_KEEP_ALIVE_TIMEOUT_MS: '10' })).toThrow(
      /PARLEY_KEEP_ALIVE_TIMEOUT_MS/,
    );
  });

  it('reads TRUST_PROXY as Express does: booleans, hop counts, addresses', () => {
    expect(validateEnv({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(validateEnv({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(validateEnv({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toBe(
      'loopback, 10.0.0.0/8',
    );
  });

  it('turns the breaker off and refuses a non-Redis REDIS_URL', () => {
    expect(validateEnv({ ACTION_SERVER_CIRCUIT_BREAKER: 'false' }).dialogue.actionCircuit).toBe(
      null,
    );
    expect(() => validateEnv({ REDIS_URL: 'http://x' })).toThrow(/REDIS_URL/);
  });
});
