//! The identity a bearer token carries: the claims seatclaim reads (RFC 7519's and Amazon
//! Cognito's). The API validates tokens against them; `seatclaimctl token` mints development
//! tokens with them. Signatures and key handling are the `jsonwebtoken` crate's, in those two.

use serde::{Deserialize, Serialize};

/// The scope that lets a token create events and read every job, unless configured otherwise
/// (`SEATCLAIM_AUTH_ADMIN_SCOPE`).
pub const DEFAULT_ADMIN_SCOPE: &str = "seatclaim/admin";

/// The scope of a payment service: it confirms a priced hold with the payment it received
/// (`POST /v1/jobs/{id}/confirm` with a body), for any buyer.
pub const PAYMENTS_SCOPE: &str = "seatclaim/payments";

/// The scope prefix of a partner service that reserves under a sales channel without a code:
/// `seatclaim/channel:<name>`.
pub const CHANNEL_SCOPE_PREFIX: &str = "seatclaim/channel:";

/// The shortest HS256 secret seatclaim signs or validates with, in bytes: RFC 7518, section 3.2
/// asks for a key at least as long as the hash (SHA-256's 32 bytes); a shorter one (or an empty
/// one) can be guessed, and whoever guesses it signs admin tokens.
pub const MIN_HS256_SECRET_BYTES: usize = 32;

/// An HS256 secret shorter than [`MIN_HS256_SECRET_BYTES`]: the API refuses to start with it,
/// and `seatclaimctl token` refuses to sign with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "SEATCLAIM_AUTH_HS256_SECRET is {len} bytes long; an HS256 secret must be at least \
     {MIN_HS256_SECRET_BYTES} bytes (RFC 7518, section 3.2), e.g. `openssl rand -base64 32`"
)]
pub struct ShortSecret {
    /// The refused secret's length in bytes (never the secret itself).
    pub len: usize,
}

/// Passes an HS256 secret of at least [`MIN_HS256_SECRET_BYTES`] bytes: the one rule the API
/// and `seatclaimctl token` share.
pub fn check_hs256_secret(secret: &str) -> Result<(), ShortSecret> {
    let len = secret.len();
    if len < MIN_HS256_SECRET_BYTES {
        return Err(ShortSecret { len });
    }
    Ok(())
}

/// The claims of a token seatclaim accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The subject: the buyer the token speaks for.
    pub sub: String,
    /// Expiry, seconds since the epoch.
    pub exp: i64,
    /// Not before, seconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<i64>,
    /// Issued at, seconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iat: Option<i64>,
    /// The issuer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iss: Option<String>,
    /// The audience: one value or several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aud: Option<Audience>,
    /// Cognito's access tokens name their app client here instead of in `aud`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Space-separated scopes (OAuth 2.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Cognito's kind of token: `access` or `id` (an ID token is for the client, not for APIs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_use: Option<String>,
}

/// The `aud` claim: a string or an array of strings (RFC 7519, 4.1.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Audience {
    /// A single audience.
    One(String),
    /// Several audiences.
    Many(Vec<String>),
}

impl Claims {
    /// Whether the space-separated `scope` claim contains `scope`.
    #[must_use]
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scope
            .as_deref()
            .is_some_and(|scopes| scopes.split(' ').any(|s| s == scope))
    }

    /// The sales channel a partner's token reserves under: its scope's
    /// `seatclaim/channel:<name>` (the first, if several), when the name is a channel name.
    #[must_use]
    pub fn channel(&self) -> Option<crate::domain::ChannelName> {
        let scopes = self.scope.as_deref()?;
        (scopes.split(' '))
            .filter_map(|scope| scope.strip_prefix(CHANNEL_SCOPE_PREFIX))
            .find_map(|name| crate::domain::ChannelName::parse(name).ok())
    }

    /// Whether the token is meant for `audience`: its `aud` contains it, or (Cognito) its
    /// `client_id` is it.
    #[must_use]
    pub fn is_for(&self, audience: &str) -> bool {
        let in_aud = match &self.aud {
            Some(Audience::One(one)) => one == audience,
            Some(Audience::Many(many)) => many.iter().any(|a| a == audience),
            None => false,
        };
        in_aud || self.client_id.as_deref() == Some(audience)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(json: serde_json::Value) -> Claims {
        serde_json::from_value(json).expect("claims")
    }

    #[test]
    fn scopes_are_whole_words_of_the_scope_claim() {
        let token =
            claims(serde_json::json!({"sub": "b1", "exp": 1, "scope": "openid seatclaim/admin"}));
        assert!(token.has_scope("seatclaim/admin"));
        assert!(!token.has_scope("seatclaim"));
        let plain = claims(serde_json::json!({"sub": "b1", "exp": 1}));
        assert!(!plain.has_scope("seatclaim/admin"));
    }

    #[test]
    fn an_hs256_secret_needs_32_bytes() {
        assert_eq!(check_hs256_secret(""), Err(ShortSecret { len: 0 }));
        assert_eq!(
            check_hs256_secret(&"s".repeat(31)),
            Err(ShortSecret { len: 31 })
        );
        assert!(check_hs256_secret(&"s".repeat(32)).is_ok());
        let said = ShortSecret { len: 20 }.to_string();
        assert!(said.contains("at least 32 bytes"), "{said}");
    }

    #[test]
    fn the_audience_is_in_aud_or_is_cognitos_client_id() {
        let one = claims(serde_json::json!({"sub": "b", "exp": 1, "aud": "web"}));
        let many = claims(serde_json::json!({"sub": "b", "exp": 1, "aud": ["x", "web"]}));
        let cognito = claims(serde_json::json!({"sub": "b", "exp": 1, "client_id": "web"}));
        let other = claims(serde_json::json!({"sub": "b", "exp": 1, "aud": "else"}));
        assert!(one.is_for("web") && many.is_for("web") && cognito.is_for("web"));
        assert!(!other.is_for("web"));
    }
}
