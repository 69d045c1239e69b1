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
