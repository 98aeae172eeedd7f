//! `seatclaimctl token`: mints an HS256 token with the API's development secret
//! (`SEATCLAIM_AUTH_HS256_SECRET`), so a local curl session can authenticate without an
//! identity provider. Production tokens come from the issuer (Cognito), never from here.

use anyhow::Context;
use clap::Args;
use jsonwebtoken::{EncodingKey, Header, encode};
use seatclaim_shared::identity::{Audience, Claims, DEFAULT_ADMIN_SCOPE};

/// What the token says.
#[derive(Debug, Args)]
pub struct TokenArgs {
    /// The buyer the token speaks for (its `sub`).
    #[arg(long)]
    sub: String,
    /// Adds the admin scope (create events, read every job).
    #[arg(long)]
    admin: bool,
    /// Seconds until it expires.
    #[arg(long, default_value_t = 3600)]
    ttl: i64,
    /// The secret the API validates HS256 tokens with.
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

/// Prints a signed token.
pub fn run(args: &TokenArgs) -> anyhow::Result<()> {
    let now = jiff::Timestamp::now().as_second();
    let claims = Claims {
        sub: args.sub.clone(),
        exp: now + args.ttl,
        nbf: None,
        iat: Some(now),
        iss: args.issuer.clone(),
        aud: args.audience.clone().map(Audience::One),
        client_id: None,
        scope: args.admin.then(|| args.admin_scope.clone()),
        token_use: None,
    };
    let key = EncodingKey::from_secret(args.secret.as_bytes());
    let token = encode(&Header::default(), &claims, &key).context("cannot sign the token")?;
    println!("{token}");
    Ok(())
}
