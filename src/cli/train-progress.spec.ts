import { PassThrough } from 'node:stream';
import { trainProgress } from './train-progress';

function fakeStream(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const stream = new PassThrough();
  let out = '';
  stream.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  Object.assign(stream, { isTTY, columns: 120 });
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => out };
}

describe('trainProgress', () => {
  it('prints plain lines every 10 % of a stage when the stream is not a terminal', () => {
    const { stream, text } = fakeStream(false);
    const lines: string[] = [];
    const progress = trainProgress(stream, (line) => lines.push(line));
    const step = { index: 0, total: 2 };
    for (const f of [0, 0.05, 0.1, 0.15, 0.5, 1]) progress.onProgress('DIETClassifier#0', f, step);
    progress.onProgress('FallbackClassifier#1', 1, { index: 1, total: 2 });
    progress.stop();
    expect(lines).toEqual([
      '  DIETClassifier#0 0%',
      '  DIETClassifier#0 10%',
      '  DIETClassifier#0 50%',
      '  DIETClassifier#0 100%',
      '  FallbackClassifier#1 100%',
    ]);
    expect(text()).toBe('');
  });

  it('draws a bar over all pipeline steps on a terminal and ends it after the last step', () => {
    const { stream, text } = fakeStream(true);
    const lines: string[] = [];
    const progress = trainProgress(stream, (line) => lines.push(line));
    progress.onProgress('WhitespaceTokenizer#0', 0, { index: 0, total: 2 });
    progress.onProgress('DIETClassifier#1', 0.5, { index: 1, total: 2 });
    progress.onProgress('DIETClassifier#1', 1, { index: 1, total: 2 });
    const final = text();
    progress.onProgress('DIETClassifier#1', 1, { index: 1, total: 2 });
    progress.stop();
    expect(lines).toEqual([]);
    expect(final).toContain('training [');
    expect(final).toContain('100% | 2/2 DIETClassifier');
    expect(text()).toBe(final); // nothing drawn once the bar has ended
  });
});
