import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readVoiceCredentials, type SpeechKeys } from './voice-credentials';

describe('voice credentials: cloud engine keys', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'parley-voice-cred-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function read(engines: string, keys: SpeechKeys): ReturnType<typeof readVoiceCredentials> {
    const file = join(dir, 'credentials.yml');
    writeFileSync(file, `genesys:\n  api_key: k\n  server_url: x.example.com\n${engines}`);
    return readVoiceCredentials(file, keys);
  }

  const none: SpeechKeys = { deepgram: null };
  const cases: Array<[string, string, SpeechKeys, RegExp]> = [
    [
      'deepgram ASR without DEEPGRAM_API_KEY',
      '  asr: {name: deepgram}\n  tts: {name: flite}\n',
      none,
      /^genesys\.asr\.name: deepgram needs DEEPGRAM_API_KEY/,
    ],
    [
      'azure TTS without AZURE_SPEECH_KEY',
      '  asr: {name: pocketsphinx}\n  tts: {name: azure}\n',
      { deepgram: null, azureRegion: 'eastus' },
      /^genesys\.tts\.name: azure needs AZURE_SPEECH_API_KEY \(or AZURE_SPEECH_KEY\)/,
    ],
    [
      'azure ASR without a region',
      '  asr: {name: azure}\n  tts: {name: flite}\n',
      { deepgram: null, azureKey: 'az' },
      /^genesys\.asr\.name: azure needs AZURE_SPEECH_REGION/,
    ],
    [
      'cartesia TTS without CARTESIA_API_KEY',
      '  asr: {name: pocketsphinx}\n  tts: {name: cartesia}\n',
      none,
      /^genesys\.tts\.name: cartesia needs CARTESIA_API_KEY/,
    ],
  ];
  it.each(cases)('refuses %s, naming the key', (_what, engines, keys, message) => {
    expect(() => read(engines, keys)).toThrow(message);
  });

  it('accepts cloud engines with their keys (azure region from the environment or an option)', () => {
    const keys: SpeechKeys = { deepgram: 'dg', azureKey: 'az', azureRegion: null, cartesia: 'ca' };
    const config = read(
      '  asr: {name: azure, region: westeurope}\n  tts: {name: cartesia}\n',
      keys,
    );
    expect(config).toMatchObject({ azureSpeechKey: 'az', cartesiaApiKey: 'ca' });
    expect(
      read('  asr: {name: deepgram}\n  tts: {name: azure}\n', { ...keys, azureRegion: 'eastus' }),
    ).toMatchObject({ deepgramApiKey: 'dg', azureSpeechRegion: 'eastus' });
  });
});
