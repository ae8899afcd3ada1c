import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../support/app.ts';

test('GET /server_settings needs no authentication and describes the organization', async () => {
  const t = await buildTestApp();
  try {
    const res = await t.as(null).get('/server_settings');
    assert.equal(res.status, 200);
    const { realm_icon, svc_feature_level, ...rest } = res.body;
    assert.match(
      String(realm_icon),
      /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/,
    );
    assert.equal(typeof svc_feature_level, 'number');
    assert.deepEqual(rest, {
      result: 'success',
      msg: '',
      authentication_methods: {
        password: true,
        dev: false,
        email: true,
        ldap: false,
        remoteuser: false,
        github: false,
        azuread: false,
        gitlab: false,
        apple: false,
        google: false,
        saml: false,
        'openid connect': false,
      },
      external_authentication_methods: [],
      svc_version: '0.1.0-parley',
      svc_merge_base: '0.1.0-parley',
      zulip_feature_level: svc_feature_level,
      zulip_version: '0.1.0-parley',
      zulip_merge_base: '0.1.0-parley',
      push_notifications_enabled: false,
      is_incompatible: false,
      email_auth_enabled: true,
      require_email_format_usernames: true,
      realm_url: 'http://parley.test',
      realm_uri: 'http://parley.test',
      realm_name: 'Parley Test',
      realm_description: '<p>The **fixture** organization.</p>',
      realm_web_public_access_enabled: false,
    });
  } finally {
    await t.close();
  }
});

test('GET /server_settings on a subdomain describes that organization', async () => {
  const t = await buildTestApp();
  try {
    const res = await t.as(null).withHeaders({ host: 'other.parley.test' }).get('/server_settings');
    assert.equal(res.status, 200);
    assert.equal(res.body.realm_name, 'Other Org');
    assert.equal(res.body.realm_url, 'http://other.parley.test');
  } finally {
    await t.close();
  }
});
