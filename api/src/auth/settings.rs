//! The authentication settings (`SEATCLAIM_AUTH_*`).

use std::time::Duration;

use clap::Args;
use seatclaim_core::identity::{DEFAULT_ADMIN_SCOPE, check_hs256_secret};

/// How the API authenticates callers.
#[derive(Debug, Clone, Args)]
pub struct AuthSettings {
    /// An OIDC issuer's JWKS URL: RS256 and ES256 tokens are validated against its keys (for
    /// Cognito: `https://cognito-idp.<region>.amazonaws.com/<pool-id>/.well-known/jwks.json`).
    /// It needs `SEATCLAIM_AUTH_ISSUER` and `SEATCLAIM_AUTH_AUDIENCE`; set but empty, it is
    /// refused.
    #[arg(long, env = "SEATCLAIM_AUTH_JWKS_URL")]
    pub jwks_url: Option<String>,
    /// A shared secret for HS256 tokens (development and tests): at least 32 bytes (RFC 7518,
    /// section 3.2); a shorter or empty one refuses to start.
    #[arg(long, env = "SEATCLAIM_AUTH_HS256_SECRET", hide_env_values = true)]
    pub hs256_secret: Option<String>,
    /// When set (and not empty), a token's `iss` must equal it.
    #[arg(long, env = "SEATCLAIM_AUTH_ISSUER")]
    pub issuer: Option<String>,
    /// When set (and not empty), a token's `aud` (or Cognito's `client_id`) must contain it;
    /// several audiences are separated by commas (a Cognito pool's buyer and operator clients),
    /// and a token must be meant for one of them.
    #[arg(long, env = "SEATCLAIM_AUTH_AUDIENCE")]
    pub audience: Option<String>,
    /// The scope that lets a token create events and read every job.
    #[arg(long, env = "SEATCLAIM_AUTH_ADMIN_SCOPE", default_value = DEFAULT_ADMIN_SCOPE)]
    pub admin_scope: String,
    /// `off` runs the AWS backend, or an API listening beyond the loopback interface, with no
    /// authentication (either refuses to start so otherwise); with a key source configured,
    /// authentication is on and `off` is refused.
    #[arg(long = "auth", env = "SEATCLAIM_AUTH")]
    pub mode: Option<AuthMode>,
    /// When set (and not empty), a token's `token_use` claim must equal it: `access` refuses
    /// Cognito's ID tokens, which are meant for the client that signed in, not for APIs.
    #[arg(long, env = "SEATCLAIM_AUTH_TOKEN_USE")]
    pub token_use: Option<String>,
    /// Seconds between refreshes of the JWKS (a token naming an unknown key also fetches it,
    /// at most every 10 seconds).
    #[arg(long, env = "SEATCLAIM_AUTH_JWKS_REFRESH_SECS", default_value_t = 300)]
    pub jwks_refresh_secs: u64,
}

/// `SEATCLAIM_AUTH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthMode {
    /// Authentication on: a key source must be configured.
    On,
    /// Authentication off, on purpose.
    Off,
}

impl AuthSettings {
    /// Whether a key source is configured, i.e. authentication is on.
    #[must_use]
    pub fn has_keys(&self) -> bool {
        self.jwks_url.is_some() || self.hs256_secret.is_some()
    }

    /// Whether the page may take a token from a `#token=` link: with HS256 development keys
    /// only, never beside an issuer's keys (a crafted link would sign a buyer in as its sender).
    #[must_use]
    pub fn allows_token_links(&self) -> bool {
        self.jwks_url.is_none()
    }

    /// The accepted audiences: `audience` split at commas, empty parts dropped.
    #[must_use]
    pub fn audiences(&self) -> Vec<String> {
        self.audience
            .iter()
            .flat_map(|list| list.split(','))
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// The JWKS refresh period.
    #[must_use]
    pub fn jwks_refresh(&self) -> Duration {
        Duration::from_secs(self.jwks_refresh_secs.max(1))
    }

    /// Refuses key sources anyone could pass ([`Self::check_keys`]), contradictory settings, an
    /// issuer without an audience (any client of the issuer would then be accepted), and a
    /// deployment that is open by accident: one `on_aws`, or one
    /// not `local` (listening beyond the loopback interface), without a key source needs
    /// `SEATCLAIM_AUTH=off`.
    pub fn check(&self, on_aws: bool, local: bool) -> Result<(), String> {
        self.check_keys()?;
        let issuer = self.issuer.as_deref().is_some_and(|i| !i.is_empty());
        if issuer && self.audiences().is_empty() {
            return Err(
                "SEATCLAIM_AUTH_ISSUER needs SEATCLAIM_AUTH_AUDIENCE: without it a token the \
                 issuer made for any other client would be accepted"
                    .into(),
            );
        }
        match (self.has_keys(), self.mode) {
            (true, Some(AuthMode::Off)) => Err(
                "SEATCLAIM_AUTH=off contradicts SEATCLAIM_AUTH_JWKS_URL / SEATCLAIM_AUTH_HS256_SECRET"
                    .into(),
            ),
            (false, Some(AuthMode::On)) => Err(
                "SEATCLAIM_AUTH=on needs SEATCLAIM_AUTH_JWKS_URL or SEATCLAIM_AUTH_HS256_SECRET"
                    .into(),
            ),
            (false, None) if on_aws => Err(
                "the AWS backend will not serve without authentication: set SEATCLAIM_AUTH_JWKS_URL \
                 (or SEATCLAIM_AUTH_HS256_SECRET), or SEATCLAIM_AUTH=off on purpose"
                    .into(),
            ),
            (false, None) if !local => Err(
                "the API will not serve beyond the loopback interface without authentication: set \
                 SEATCLAIM_AUTH_JWKS_URL (or SEATCLAIM_AUTH_HS256_SECRET), or SEATCLAIM_AUTH=off on \
                 purpose"
                    .into(),
            ),
            _ => Ok(()),
        }
    }

    /// Refuses key sources that would let anyone in: an HS256 secret shorter than 32 bytes
    /// (or empty: anyone could sign an admin token), an empty JWKS URL, and a JWKS without an
    /// issuer and an audience (every token signed with the key set's keys, for whichever client
    /// of the issuer, would pass).
    fn check_keys(&self) -> Result<(), String> {
        if let Some(secret) = &self.hs256_secret {
            check_hs256_secret(secret).map_err(|short| short.to_string())?;
        }
        let Some(url) = &self.jwks_url else {
            return Ok(());
        };
        if url.trim().is_empty() {
            return Err(
                "SEATCLAIM_AUTH_JWKS_URL is set but empty: set the issuer's JWKS URL, or \
                        unset it"
                    .into(),
            );
        }
        let issuer = self.issuer.as_deref().is_some_and(|i| !i.trim().is_empty());
        if !issuer || self.audiences().is_empty() {
            return Err(
                "SEATCLAIM_AUTH_JWKS_URL needs SEATCLAIM_AUTH_ISSUER and SEATCLAIM_AUTH_AUDIENCE: \
                 without them every token signed by the key set's keys would be accepted"
                    .into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(secret: bool, mode: Option<AuthMode>) -> AuthSettings {
        AuthSettings {
            jwks_url: None,
            hs256_secret: secret.then(|| "s".repeat(32)),
            issuer: None,
            audience: None,
            admin_scope: DEFAULT_ADMIN_SCOPE.to_owned(),
            mode,
            token_use: None,
            jwks_refresh_secs: 300,
        }
    }

    #[test]
    fn aws_refuses_to_run_open_unless_told_to() {
        assert!(settings(false, None).check(true, true).is_err());
        assert!(
            settings(false, Some(AuthMode::Off))
                .check(true, true)
                .is_ok()
        );
        assert!(settings(true, None).check(true, true).is_ok());
        assert!(
            settings(false, None).check(false, true).is_ok(),
            "embedded may run open on the loopback interface"
        );
    }

    #[test]
    fn an_open_api_beyond_the_loopback_interface_must_be_meant() {
        assert!(settings(false, None).check(false, false).is_err());
        assert!(
            settings(false, Some(AuthMode::Off))
                .check(false, false)
                .is_ok()
        );
        assert!(settings(true, None).check(false, false).is_ok());
    }

    #[test]
    fn an_issuer_needs_an_audience() {
        let mut issued = settings(true, None);
        issued.issuer = Some("https://issuer.example".into());
        assert!(issued.check(false, true).is_err());
        issued.audience = Some("buyers".into());
        assert!(issued.check(false, true).is_ok());
        issued.issuer = Some(String::new());
        issued.audience = None;
        assert!(issued.check(false, true).is_ok(), "an empty issuer is none");
    }

    #[test]
    fn an_hs256_secret_shorter_than_32_bytes_or_empty_is_refused() {
        for short in ["", "twenty-bytes-secret!", &"s".repeat(31)] {
            let mut weak = settings(false, None);
            weak.hs256_secret = Some(short.to_owned());
            let refused = weak.check(false, true).expect_err(short);
            assert!(refused.contains("at least 32 bytes"), "{refused}");
        }
        assert!(settings(true, None).check(false, true).is_ok());
    }

    #[test]
    fn a_jwks_needs_an_issuer_and_an_audience_and_may_not_be_empty() {
        let mut jwks = settings(false, None);
        jwks.jwks_url = Some("https://issuer.example/jwks.json".into());
        let refused = jwks.check(true, false).expect_err("no issuer, no audience");
        assert!(refused.contains("SEATCLAIM_AUTH_ISSUER"), "{refused}");
        jwks.issuer = Some("https://issuer.example".into());
        assert!(jwks.check(true, false).is_err(), "no audience");
        jwks.audience = Some(" , ".into());
        assert!(jwks.check(true, false).is_err(), "an empty audience list");
        jwks.audience = Some("buyers".into());
        assert!(jwks.check(true, false).is_ok());
        jwks.issuer = Some(" ".into());
        assert!(jwks.check(true, false).is_err(), "a blank issuer");
        jwks.issuer = Some("https://issuer.example".into());
        jwks.jwks_url = Some(String::new());
        let refused = jwks.check(true, false).expect_err("an empty URL");
        assert!(refused.contains("empty"), "{refused}");
    }

    #[test]
    fn audiences_are_a_comma_separated_list() {
        let mut listed = settings(true, None);
        listed.audience = Some(" buyers, operators ,".into());
        assert_eq!(listed.audiences(), ["buyers", "operators"]);
        listed.audience = Some(String::new());
        assert!(listed.audiences().is_empty());
    }

    #[test]
    fn contradictory_settings_are_refused() {
        assert!(
            settings(true, Some(AuthMode::Off))
                .check(false, true)
                .is_err()
        );
        assert!(
            settings(false, Some(AuthMode::On))
                .check(false, true)
                .is_err()
        );
        assert!(settings(true, Some(AuthMode::On)).check(true, true).is_ok());
    }
}
