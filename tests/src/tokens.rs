//! Bearer tokens for the authentication tests, signed by the `jsonwebtoken` crate: HS256 with a
//! shared secret, and RS256 / ES256 with the fixture keys in `tests/fixtures/keys/`, whose
//! public halves the tests serve as a JWKS.

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};

/// A fixture signing key: its PEM file in `tests/fixtures/keys/` and its algorithm.
#[derive(Debug, Clone, Copy)]
pub struct FixtureKey {
    /// The file name.
    pub file: &'static str,
    /// RS256 or ES256.
    pub alg: Algorithm,
}

/// The first RSA key.
pub const RSA_A: FixtureKey = FixtureKey {
    file: "rsa-a.pem",
    alg: Algorithm::RS256,
};
/// The second RSA key.
pub const RSA_B: FixtureKey = FixtureKey {
    file: "rsa-b.pem",
    alg: Algorithm::RS256,
};
/// The P-256 key.
pub const EC_A: FixtureKey = FixtureKey {
    file: "ec-a.pem",
    alg: Algorithm::ES256,
};

fn encoding_key(key: FixtureKey) -> EncodingKey {
    let path = format!("{}/fixtures/keys/{}", env!("CARGO_MANIFEST_DIR"), key.file);
    let pem = std::fs::read(&path).unwrap();
    match key.alg {
        Algorithm::ES256 => EncodingKey::from_ec_pem(&pem).unwrap(),
        _ => EncodingKey::from_rsa_pem(&pem).unwrap(),
    }
}

/// Claims for `sub` valid for an hour from now, plus `extra` (which may override them).
#[must_use]
pub fn claims(sub: &str, extra: &Value) -> Value {
    let now = jiff::Timestamp::now().as_second();
    let mut claims = json!({"sub": sub, "iat": now, "exp": now + 3600});
    if let (Some(base), Some(more)) = (claims.as_object_mut(), extra.as_object()) {
        base.extend(more.clone());
    }
    claims
}

/// An HS256 token of `claims` signed with `secret`.
#[must_use]
pub fn hs256_token(secret: &str, claims: &Value) -> String {
    encode(
        &Header::default(),
        claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

/// A token of `claims` signed with `key`, its header naming `kid`.
#[must_use]
pub fn signed_token(key: FixtureKey, kid: &str, claims: &Value) -> String {
    let header = Header {
        kid: Some(kid.to_owned()),
        ..Header::new(key.alg)
    };
    encode(&header, claims, &encoding_key(key)).unwrap()
}

/// A JWKS document publishing `keys`' public halves under the given key ids.
#[must_use]
pub fn jwks(keys: &[(FixtureKey, &str)]) -> Value {
    let keys: Vec<Jwk> = keys
        .iter()
        .map(|(key, kid)| {
            let mut jwk = Jwk::from_encoding_key(&encoding_key(*key), key.alg).unwrap();
            jwk.common.key_id = Some((*kid).to_owned());
            jwk
        })
        .collect();
    serde_json::to_value(JwkSet { keys }).unwrap()
}
