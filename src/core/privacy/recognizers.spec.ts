import { ibanValid, luhnValid, recognize, resolveOverlaps } from './recognizers';

const ALL = new Set([
  'EMAIL_ADDRESS',
  'URL',
  'IBAN_CODE',
  'CREDIT_CARD',
  'IP_ADDRESS',
  'US_SSN',
  'PHONE_NUMBER',
]);

const found = (text: string, wanted: Set<string> = ALL): Array<[string, string]> =>
  resolveOverlaps(recognize(text, wanted)).map((s) => [s.type, text.slice(s.start, s.end)]);

describe('PII recognisers', () => {
  it('checksums: Luhn and IBAN mod-97', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(ibanValid('DE89 3704 0044 0532 0130 00')).toBe(true);
    expect(ibanValid('DE89 3704 0044 0532 0130 01')).toBe(false);
  });

  it('finds each pattern type in a sentence', () => {
    expect(found('mail me at anna.k@example.org please')).toEqual([
      ['EMAIL_ADDRESS', 'anna.k@example.org'],
    ]);
    expect(found('card 4111 1111 1111 1111 ok')).toEqual([['CREDIT_CARD', '4111 1111 1111 1111']]);
    expect(found('IBAN DE89 3704 0044 0532 0130 00.')).toEqual([
      ['IBAN_CODE', 'DE89 3704 0044 0532 0130 00'],
    ]);
    expect(found('from 10.0.0.12 and 2001:db8::1')).toEqual([
      ['IP_ADDRESS', '10.0.0.12'],
      ['IP_ADDRESS', '2001:db8::1'],
    ]);
    expect(found('call +49 170 1234567 now')).toEqual([['PHONE_NUMBER', '+49 170 1234567']]);
    expect(found('ssn 123-45-6789')).toEqual([['US_SSN', '123-45-6789']]);
    expect(found('see https://x.example.com/a?b=1.')).toEqual([
      ['URL', 'https://x.example.com/a?b=1'],
    ]);
  });

  it('leaves ordinary numbers, invalid checksums and impossible addresses alone', () => {
    expect(found('I want 3 pizzas at 19:30 on 2024-05-01')).toEqual([]);
    expect(found('card 4111 1111 1111 1112')).toEqual([]);
    expect(found('host 999.1.1.1')).toEqual([]);
  });

  it('only the wanted types', () => {
    expect(found('a@b.de or +49 170 1234567', new Set(['PHONE_NUMBER']))).toEqual([
      ['PHONE_NUMBER', '+49 170 1234567'],
    ]);
  });

  it('overlaps: the longer span wins, a tie the one listed first', () => {
    const spans = resolveOverlaps([
      { start: 0, end: 4, type: 'A' },
      { start: 2, end: 9, type: 'B' },
      { start: 10, end: 12, type: 'C' },
      { start: 10, end: 12, type: 'D' },
    ]);
    expect(spans.map((s) => s.type)).toEqual(['B', 'C']);
  });
});
