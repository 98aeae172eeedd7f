//! An OIDC issuer's signing keys (its JWKS document), kept fresh: fetched at start, again every
//! refresh period, and again when a token names a key id not in hand, unless such an on-demand
//! fetch began less than [`REFETCH_PAUSE`] ago, so a key the issuer rotates in is accepted without
//! a restart, also right after one (the start-up and periodic fetches do not count).

use std::str::FromStr;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey};
use tokio::sync::{Mutex, RwLock};

/// The least time between two fetches caused by unknown key ids: a flood of tokens with made-up
/// `kid`s cannot turn into a flood of requests to the issuer.
const REFETCH_PAUSE: Duration = Duration::from_secs(10);
/// How long a fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The keys of one JWKS URL.
pub struct Jwks {
    url: String,
    client: reqwest::Client,
    keys: RwLock<JwkSet>,
    /// When the last on-demand fetch started; those fetches queue here.
    fetched_on_demand: Mutex<Option<Instant>>,
}

impl Jwks {
    /// Fetches the keys of `url` (a failure is logged, and tokens get 401 until a fetch works)
    /// and refreshes them every `refresh` for as long as the returned handle lives.
    pub async fn start(url: String, refresh: Duration) -> Arc<Self> {
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .build()
            .unwrap_or_default();
        let jwks = Arc::new(Self {
            url,
            client,
            keys: RwLock::new(JwkSet { keys: Vec::new() }),
            fetched_on_demand: Mutex::new(None),
        });
        jwks.refetch().await;
        tokio::spawn(refresh_while_alive(Arc::downgrade(&jwks), refresh));
        jwks
    }

    /// The key `kid` for a token signed with `alg`: `None` if the issuer has no such key (after
    /// a fresh fetch, when one is allowed) or the key is for another algorithm.
    pub async fn key(&self, kid: &str, alg: Algorithm) -> Option<DecodingKey> {
        if let Some(key) = self.find(kid, alg).await {
            return Some(key);
        }
        self.refetch_on_demand().await;
        self.find(kid, alg).await
    }

    async fn find(&self, kid: &str, alg: Algorithm) -> Option<DecodingKey> {
        let keys = self.keys.read().await;
        let jwk = keys.find(kid)?;
        (key_algorithm(jwk).is_none_or(|own| own == alg))
            .then(|| DecodingKey::from_jwk(jwk).ok())
            .flatten()
    }

    /// Fetches the document again for a key id not in hand, unless the last such fetch began
    /// less than [`REFETCH_PAUSE`] ago: a flood of made-up key ids costs the issuer one request
    /// per pause.
    async fn refetch_on_demand(&self) {
        let mut fetched = self.fetched_on_demand.lock().await;
        if fetched.is_some_and(|at| at.elapsed() < REFETCH_PAUSE) {
            return;
        }
        *fetched = Some(Instant::now());
        self.refetch().await;
    }

    /// Fetches the document again and keeps its keys (a failure keeps the ones in hand).
    async fn refetch(&self) {
        match self.fetch().await {
            Ok(set) => {
                tracing::info!(url = %self.url, keys = set.keys.len(), "JWKS fetched");
                *self.keys.write().await = set;
            }
            Err(error) => tracing::error!(url = %self.url, %error, "cannot fetch the JWKS"),
        }
    }

    async fn fetch(&self) -> Result<JwkSet, reqwest::Error> {
        self.client
            .get(&self.url)
            .send()
            .await?
            .error_for_status()?
            .json::<JwkSet>()
            .await
    }
}

/// The algorithm a key declares (`alg`), if it declares one this crate knows.
fn key_algorithm(jwk: &Jwk) -> Option<Algorithm> {
    let declared = jwk.common.key_algorithm.as_ref()?;
    Algorithm::from_str(&declared.to_string()).ok()
}

async fn refresh_while_alive(jwks: Weak<Jwks>, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let Some(jwks) = jwks.upgrade() else { return };
        jwks.refetch().await;
    }
}
