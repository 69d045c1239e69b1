import { principalOf } from './oidc-principal';
import { testConfigOidc } from './oidc-principal.testing';

describe('principalOf', () => {
  const keycloak = {
    typ: 'Bearer',
    azp: 'parley-external',
    sub: '4c1d…',
    realm_access: { roles: ['default-roles-parley', 'offline_access'] },
    resource_access: {
      account: { roles: ['view-profile'] },
      'parley-api': { roles: ['Manage Conversations'] },
    },
  };

  it('collects realm roles and the client roles of every client by default', () => {
    const p = principalOf(keycloak, testConfigOidc());
    expect(p?.clientId).toBe('parley-external');
    expect([...(p?.roles ?? [])].sort()).toEqual([
      'Manage Conversations',
      'default-roles-parley',
      'offline_access',
      'view-profile',
    ]);
  });

  it('counts only the listed clients when OIDC_ROLE_CLIENTS is set', () => {
    const p = principalOf(keycloak, testConfigOidc({ roleClients: ['account'] }));
    expect(p?.roles.has('Manage Conversations')).toBe(false);
    expect(p?.roles.has('view-profile')).toBe(true);
  });

  it('reads client_id when azp is absent and tolerates missing or odd role claims', () => {
    const p = principalOf(
      { client_id: 'ci', realm_access: { roles: 'x' }, resource_access: { a: null } },
      testConfigOidc(),
    );
    expect(p).toEqual({ clientId: 'ci', subject: null, roles: new Set() });
  });

  it('refuses Keycloak ID and refresh tokens', () => {
    expect(principalOf({ ...keycloak, typ: 'ID' }, testConfigOidc())).toBeNull();
    expect(principalOf({ ...keycloak, typ: 'Refresh' }, testConfigOidc())).toBeNull();
    expect(principalOf('nope', testConfigOidc())).toBeNull();
  });
});
