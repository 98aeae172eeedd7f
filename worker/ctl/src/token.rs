//! `seatclaimctl token`: mints an HS256 token with the API's development secret
//! (`SEATCLAIM_AUTH_HS256_SECRET`), so a local curl session can authenticate without an
//! identity provider. Production tokens come from the issuer (Cognito), never from here.

use anyhow::Context;
use clap::Args;
use jsonwebtoken::{EncodingKey, Header, encode};
use seatclaim_core::identity::{
    Audience, Claims, DEFAULT_ADMIN_SCOPE, PAYMENTS_SCOPE, check_hs256_secret,
};

/// What the token says.
#[derive(Debug, Args)]
pub struct TokenArgs {
    /// The buyer the token speaks for (its `sub`).
    #[arg(long)]
    sub: String,
    /// Adds the admin scope (create events, read every job).
    #[arg(long)]
    admin: bool,
    /// Adds the payments scope (a payment service: confirm a priced hold with its payment).
    #[arg(long)]
    payments: bool,
    /// Seconds until it expires.
    #[arg(long, default_value_t = 3600)]
    ttl: i64,
    /// The secret the API validates HS256 tokens with: at least 32 bytes, as the API requires.
    #[arg(long, env = "SEATCLAIM_AUTH_HS256_SECRET", hide_env_values = true)]
    secret: String,
    /// The `iss` claim (what `SEATCLAIM_AUTH_ISSUER` expects, if set).
    #[arg(long, env = "SEATCLAIM_AUTH_ISSUER")]
    issuer: Option<String>,
    /// The `aud` claim (what `SEATCLAIM_AUTH_AUDIENCE` expects, if set).
    #[arg(long, env = "SEATCLAIM_AUTH_AUDIENCE")]
    audience: Option<String>,
    /// The admin scope's name.
    #[arg(long, env = "SEATCLAIM_AUTH_ADMIN_SCOPE", default_value = DEFAULT_ADMIN_SCOPE)]
    admin_scope: String,
}

/// The token's `scope`: the scopes asked for, space-separated, or none.
fn scope(args: &TokenArgs) -> Option<String> {
    let scopes: Vec<&str> = [
        args.admin.then_some(args.admin_scope.as_str()),
        args.payments.then_some(PAYMENTS_SCOPE),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

/// Prints a signed token; refuses a secret shorter than 32 bytes, which the API would refuse
/// to start with (a token signed with it would only ever be refused).
pub fn run(args: &TokenArgs) -> anyhow::Result<()> {
    check_hs256_secret(&args.secret)?;
    let now = jiff::Timestamp::now().as_second();
    let claims = Claims {
        sub: args.sub.clone(),
        exp: now + args.ttl,
        nbf: None,
        iat: Some(now),
        iss: args.issuer.clone(),
        aud: args.audience.clone().map(Audience::One),
        client_id: None,
        scope: scope(args),
        token_use: None,
    };
    let key = EncodingKey::from_secret(args.secret.as_bytes());
    let token = encode(&Header::default(), &claims, &key).context("cannot sign the token")?;
    println!("{token}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(admin: bool, payments: bool) -> TokenArgs {
        TokenArgs {
            sub: "b1".into(),
            admin,
            payments,
            ttl: 60,
            secret: "s".repeat(32),
            issuer: None,
            audience: None,
            admin_scope: DEFAULT_ADMIN_SCOPE.into(),
        }
    }

    #[test]
    fn a_secret_shorter_than_32_bytes_signs_nothing() {
        let mut short = args(false, false);
        short.secret = "twenty-bytes-secret!".into();
        let refused = run(&short).expect_err("a 20-byte secret");
        assert!(
            refused.to_string().contains("at least 32 bytes"),
            "{refused}"
        );
        short.secret = String::new();
        assert!(run(&short).is_err(), "an empty secret");
    }

    #[test]
    fn the_scope_names_each_scope_asked_for() {
        assert_eq!(scope(&args(false, false)), None);
        assert_eq!(
            scope(&args(true, false)).as_deref(),
            Some("seatclaim/admin")
        );
        assert_eq!(
            scope(&args(true, true)).as_deref(),
            Some("seatclaim/admin seatclaim/payments")
        );
    }
}
