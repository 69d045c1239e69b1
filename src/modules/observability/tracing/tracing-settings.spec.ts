import { tracingSettingsOf } from './tracing-settings';

describe('tracingSettingsOf (endpoints.yml tracing:)', () => {
  it('is off without the entry', () => {
    expect(tracingSettingsOf('e.yml', undefined, [])).toBeNull();
    expect(tracingSettingsOf('e.yml', null, [])).toBeNull();
  });

  it('reads Rasa Pro’s otlp keys; a bare host:port gets a scheme from insecure and the traces path', () => {
    const warnings: string[] = [];
    expect(
      tracingSettingsOf(
        'e.yml',
        { type: 'otlp', endpoint: 'collector:4318', insecure: true, service_name: 'bank' },
        warnings,
      ),
    ).toEqual({
      type: 'otlp',
      url: 'http://collector:4318/v1/traces',
      serviceName: 'bank',
      rootCertificates: null,
    });
    expect(warnings).toEqual([]);
    expect(
      tracingSettingsOf(
        'e.yml',
        { type: 'otlp', endpoint: 'collector:4318', root_certificates: '/ca.pem' },
        [],
      ),
    ).toEqual(
      expect.objectContaining({
        url: 'https://collector:4318/v1/traces',
        serviceName: 'rasa',
        rootCertificates: '/ca.pem',
      }),
    );
    expect(
      tracingSettingsOf('e.yml', { type: 'otlp', endpoint: 'https://c.example/otlp/x' }, []),
    ).toEqual(expect.objectContaining({ url: 'https://c.example/otlp/x' }));
  });

  it('exports jaeger as OTLP, to its endpoint or its host on 4318, with a warning', () => {
    const warnings: string[] = [];
    expect(tracingSettingsOf('e.yml', { type: 'jaeger', host: 'jaeger' }, warnings)).toEqual(
      expect.objectContaining({ type: 'jaeger', url: 'http://jaeger:4318/v1/traces' }),
    );
    expect(warnings).toEqual([expect.stringContaining('Parley exports OTLP over HTTP')]);
  });

  it('refuses what it cannot export to', () => {
    expect(() => tracingSettingsOf('e.yml', { type: 'zipkin', endpoint: 'x:1' }, [])).toThrow(
      /tracing.type must be otlp or jaeger/,
    );
    expect(() => tracingSettingsOf('e.yml', { type: 'otlp' }, [])).toThrow(/needs an 'endpoint'/);
    expect(() => tracingSettingsOf('e.yml', ['otlp'], [])).toThrow(/must be a mapping/);
    expect(() =>
      tracingSettingsOf('e.yml', { type: 'otlp', endpoint: 'grpc://c:4317' }, []),
    ).toThrow(/must be http\(s\)/);
  });
});
