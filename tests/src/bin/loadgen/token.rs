//! Bearer tokens for a service with authentication on. The load generator signs HS256 tokens
//! with the API's development secret (`SEATCLAIM_AUTH_HS256_SECRET`), one per buyer as an
//! identity provider would hand them out, so that a run measures what validating them costs.

use anyhow::Context;
use jsonwebtoken::{EncodingKey, Header, encode};
use seatclaim_core::identity::{Claims, DEFAULT_ADMIN_SCOPE};

/// How long a minted token lives: longer than any run.
const TTL_SECONDS: i64 = 6 * 3_600;

/// Signs the run's tokens.
pub struct Signer {
    key: EncodingKey,
}

impl Signer {
    /// A signer with the API's shared secret.
    pub fn new(secret: &str) -> Self {
        Self {
            key: EncodingKey::from_secret(secret.as_bytes()),
        }
    }

    /// A token that speaks for buyer `sub`.
    pub fn buyer(&self, sub: &str) -> anyhow::Result<String> {
        self.sign(sub, None)
    }

    /// A token with the admin scope, which creating the run's event needs.
    pub fn admin(&self) -> anyhow::Result<String> {
        self.sign("seatclaim-loadgen", Some(DEFAULT_ADMIN_SCOPE.to_owned()))
    }

    fn sign(&self, sub: &str, scope: Option<String>) -> anyhow::Result<String> {
        let now = jiff::Timestamp::now().as_second();
        let claims = Claims {
            sub: sub.to_owned(),
            exp: now + TTL_SECONDS,
            nbf: None,
            iat: Some(now),
            iss: None,
            aud: None,
            client_id: None,
            scope,
            token_use: None,
        };
        encode(&Header::default(), &claims, &self.key).context("cannot sign a token")
    }
}
