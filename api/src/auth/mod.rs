//! Who is calling: bearer tokens (RFC 6750) validated against the configured key sources, an
//! OIDC issuer's JWKS (RS256, ES256) and a shared secret (HS256, for development and tests).
//! With neither configured, authentication is off and the body's `buyer_id` is believed, as the
//! zero-config local run needs. The checks themselves are the `jsonwebtoken` crate's.

mod jwks;
mod settings;

use std::sync::Arc;

use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use seatclaim_core::domain::BuyerId;
use seatclaim_core::identity::{Claims, PAYMENTS_SCOPE};

pub use jwks::Jwks;
pub use settings::{AuthMode, AuthSettings};

/// Clock skew allowed on `exp` and `nbf`, in seconds.
const LEEWAY_SECONDS: u64 = 60;

/// Why a request is not authenticated; each is a 401 with a `WWW-Authenticate` challenge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization` header.
    #[error("a bearer token is required")]
    Missing,
    /// A token that does not validate, and why.
    #[error("the bearer token is not valid: {0}")]
    Invalid(String),
}

/// The caller a valid token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The buyer: the token's `sub`.
    pub buyer: BuyerId,
    /// Whether the token carries the admin scope (create events, read every job).
    pub admin: bool,
    /// Whether the token carries the payments scope (confirm a priced hold with its payment).
    pub payments: bool,
    /// The sales channel a partner's token reserves under (`seatclaim/channel:<name>`).
    pub channel: Option<seatclaim_core::domain::ChannelName>,
}

/// Validates tokens against the configured key sources and claims.
pub struct Authenticator {
    secret: Option<DecodingKey>,
    jwks: Option<Arc<Jwks>>,
    issuer: Option<String>,
    /// Accepted audiences; empty accepts any.
    audiences: Vec<String>,
    /// The `token_use` a token must carry, if one is required.
    token_use: Option<String>,
    admin_scope: String,
}

impl Authenticator {
    /// An authenticator for these settings' key sources; `None` when none is configured
    /// (authentication is off). The JWKS is fetched now and refreshed in the background.
    pub async fn from_settings(settings: &AuthSettings) -> Option<Self> {
        let jwks = match &settings.jwks_url {
            Some(url) => Some(Jwks::start(url.clone(), settings.jwks_refresh()).await),
            None => None,
        };
        let secret = settings
            .hs256_secret
            .as_ref()
            .map(|secret| DecodingKey::from_secret(secret.as_bytes()));
        let set = |value: &Option<String>| value.clone().filter(|v| !v.is_empty());
        (secret.is_some() || jwks.is_some()).then(|| Self {
            secret,
            jwks,
            issuer: set(&settings.issuer),
            audiences: settings.audiences(),
            token_use: set(&settings.token_use),
            admin_scope: settings.admin_scope.clone(),
        })
    }

    /// The identity `token` proves, or why it proves none.
    pub async fn identify(&self, token: &str) -> Result<Identity, AuthError> {
        let invalid = |why: &str| AuthError::Invalid(why.to_owned());
        let header = decode_header(token).map_err(|_| invalid("malformed token"))?;
        let key = match (header.alg, &self.secret, &self.jwks) {
            (Algorithm::HS256, Some(secret), _) => secret.clone(),
            (Algorithm::RS256 | Algorithm::ES256, _, Some(jwks)) => {
                let kid = header.kid.as_deref().ok_or_else(|| invalid("no kid"))?;
                jwks.key(kid, header.alg)
                    .await
                    .ok_or_else(|| invalid("unknown key"))?
            }
            _ => return Err(invalid("algorithm not accepted")),
        };
        let claims = decode::<Claims>(token, &key, &self.validation(header.alg))
            .map_err(|error| AuthError::Invalid(reason(error.kind())))?
            .claims;
        if !self.audiences.is_empty() && !self.audiences.iter().any(|a| claims.is_for(a)) {
            return Err(invalid("wrong audience"));
        }
        if let Some(wanted) = &self.token_use
            && claims.token_use.as_ref() != Some(wanted)
        {
            return Err(invalid("wrong token_use"));
        }
        let buyer =
            BuyerId::parse(&claims.sub).map_err(|_| invalid("subject is not a buyer id"))?;
        Ok(Identity {
            buyer,
            admin: claims.has_scope(&self.admin_scope),
            payments: claims.has_scope(PAYMENTS_SCOPE),
            channel: claims.channel(),
        })
    }

    /// The checks for a token signed with `alg`: signature, `exp` (required) and `nbf` with
    /// [`LEEWAY_SECONDS`], `iss` when configured. The audience is checked after, as Cognito puts
    /// it in `client_id`.
    fn validation(&self, alg: Algorithm) -> Validation {
        let mut validation = Validation::new(alg);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        validation.validate_aud = false;
        match &self.issuer {
            Some(issuer) => {
                validation.set_issuer(&[issuer]);
                validation.set_required_spec_claims(&["exp", "sub", "iss"]);
            }
            None => validation.set_required_spec_claims(&["exp", "sub"]),
        }
        validation
    }
}

/// A short, safe description of a validation failure for the challenge.
fn reason(kind: &jsonwebtoken::errors::ErrorKind) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match kind {
        ErrorKind::ExpiredSignature => "expired",
        ErrorKind::ImmatureSignature => "not yet valid",
        ErrorKind::InvalidIssuer => "wrong issuer",
        ErrorKind::InvalidAudience => "wrong audience",
        ErrorKind::InvalidSignature => "bad signature",
        ErrorKind::InvalidAlgorithm => "algorithm not accepted",
        ErrorKind::MissingRequiredClaim(_) => "a required claim is missing",
        _ => "malformed token",
    }
    .to_owned()
}
