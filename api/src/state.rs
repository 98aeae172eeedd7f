//! The router's state: the backend, and the access policy every request is checked against.

use std::sync::Arc;

use crate::auth::Authenticator;
use crate::long_poll::LongPolls;
use crate::rate::BuyerRate;
use crate::readiness::Readiness;
use crate::seat_maps::{SeatMapLimits, SeatMaps};
use crate::settings::{ApiSettings, PaymentsMode};
use crate::stripe::{StripeEndpoint, StripeScope, WebhookSecret};
use axum::extract::FromRef;
use seatclaim_core::Backend;
use seatclaim_core::app;

/// What the handlers share, behind one `Arc`: axum clones the state for every request, and one
/// reference count is cheaper to move between the cores than the backend's ten (the profile's
/// `drop_in_place<AppState>`).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

/// The shared parts themselves, reached through [`AppState`]'s `Deref`.
pub struct Shared {
    /// The ports.
    pub backend: Backend,
    /// Authentication and per-buyer limits.
    pub access: Arc<Access>,
    /// The seat-map snapshots of the read path.
    pub seat_maps: Arc<SeatMaps>,
    /// Whether this process runs the worker, so that an admission may decide its claim in the
    /// same write (`app::admit`): one durable write per decision.
    pub decides_on_admission: bool,
    /// The readiness probe's newest check.
    pub readiness: Readiness,
    /// Each event's decision rate, for the queue positions of PENDING jobs.
    pub line_rates: app::jobs::LineRates,
    /// The OpenAPI document `GET /openapi.json` serves, rendered by the composition
    /// (`crate::openapi::json`) from the same route list the router is built from.
    pub document: axum::body::Bytes,
}

impl AppState {
    /// The state of an API on `backend` under `access`, its seat maps kept within `seat_maps`;
    /// `runs_worker` when the worker runs in this process (admissions may then decide); it serves
    /// `document` as its OpenAPI document.
    #[must_use]
    pub fn new(
        backend: Backend,
        access: Access,
        seat_maps: SeatMapLimits,
        runs_worker: bool,
        document: axum::body::Bytes,
    ) -> Self {
        Self(Arc::new(Shared {
            decides_on_admission: runs_worker,
            document,
            readiness: Readiness::default(),
            line_rates: app::jobs::LineRates::default(),
            seat_maps: Arc::new(SeatMaps::new(backend.clone(), seat_maps)),
            backend,
            access: Arc::new(access),
        }))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// Who may call, and how often.
pub struct Access {
    /// Validates bearer tokens; `None` when authentication is off.
    pub auth: Option<Authenticator>,
    /// The scope that lets a token create events and read every job.
    pub admin_scope: String,
    /// Whether `POST /v1/events` creates events (`SEATCLAIM_API_CREATES_EVENTS`).
    pub creates_events: bool,
    /// The most seats such an event may have (`SEATCLAIM_MAX_EVENT_SEATS`).
    pub max_event_seats: usize,
    /// The per-buyer limit of such an event created without one
    /// (`SEATCLAIM_DEFAULT_MAX_SEATS_PER_BUYER`; `None`: no limit).
    pub default_seat_limit: Option<seatclaim_core::domain::SeatLimit>,
    /// What the web page signs in with: the issuer and the OIDC client, when both are set.
    pub ui_oidc: Option<UiOidc>,
    /// The origins beyond the API's own that the page fetches from (its issuer's endpoints),
    /// for the Content-Security-Policy.
    pub page_origins: Vec<String>,
    /// Whether the page takes a token from a `#token=` link: only with HS256 development keys,
    /// never beside an issuer's keys (a crafted link would sign the victim in as its sender).
    pub token_links: bool,
    /// Reservation POSTs per buyer.
    pub buyers: BuyerRate,
    /// The slots of requests waiting for a decision (`SEATCLAIM_MAX_LONG_POLLS`).
    pub long_polls: LongPolls,
    /// How long a request's body may take to arrive (`SEATCLAIM_BODY_READ_TIMEOUT_SECS`).
    pub body_read_timeout: std::time::Duration,
    /// Stripe's webhook: its secret, and the mode and accounts whose events pay.
    pub stripe: Option<StripeEndpoint>,
    /// Whether a priced hold is sold by its payment alone (`PaymentsMode::required`): the
    /// settlement's step refuses a confirm without one.
    pub payments_required: bool,
    /// The key access codes are hashed with (`SEATCLAIM_ACCESS_CODE_KEY`, or on the embedded
    /// backend one kept in its data folder); `None`: codes are off (503).
    pub code_key: Option<seatclaim_core::domain::CodeKey>,
}

impl Access {
    /// Whether a priced hold waits for its payment.
    #[must_use]
    pub fn payments_required(&self) -> bool {
        self.payments_required
    }
}

impl Access {
    /// The access policy of `settings`: refuses contradictory authentication settings, and an
    /// AWS deployment (`on_aws`) or a listener beyond the loopback interface left open by
    /// accident; warns when authentication is off.
    pub async fn from_settings(settings: &ApiSettings, on_aws: bool) -> Result<Self, String> {
        let local = settings.listen.ip().is_loopback();
        settings.auth.check(on_aws, local)?;
        let scope = StripeScope::new(settings.stripe_livemode, &settings.stripe_accounts)?;
        let stripe = settings
            .stripe_webhook_secret
            .as_deref()
            .and_then(WebhookSecret::new)
            .map(|secret| StripeEndpoint { secret, scope });
        PaymentsMode::check(settings.payments, local, stripe.is_some())?;
        let auth = Authenticator::from_settings(&settings.auth).await;
        if auth.is_none() {
            tracing::warn!(
                "authentication is off: anyone who reaches the API may act as any buyer \
                 (set SEATCLAIM_AUTH_JWKS_URL or SEATCLAIM_AUTH_HS256_SECRET)"
            );
        }
        let ui_oidc = UiOidc::from_settings(settings);
        let page_origins = match &ui_oidc {
            Some(oidc) => oidc.origins().await,
            None => Vec::new(),
        };
        let payments_required =
            PaymentsMode::required(settings.payments, auth.is_some(), stripe.is_some());
        Ok(Self {
            code_key: None,
            payments_required,
            stripe,
            auth,
            admin_scope: settings.auth.admin_scope.clone(),
            token_links: settings.auth.allows_token_links(),
            creates_events: settings.api_creates_events,
            max_event_seats: usize::try_from(settings.max_event_seats).unwrap_or(usize::MAX),
            default_seat_limit: settings.event_defaults.seat_limit(),
            ui_oidc,
            page_origins,
            buyers: BuyerRate::new(settings.buyer_rate, settings.buyer_burst),
            long_polls: LongPolls::new(&settings.limits),
            body_read_timeout: settings.limits.body_read_timeout(),
        })
    }
}

/// The web page's OpenID Connect sign-in: authorization code with PKCE at `issuer`.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct UiOidc {
    /// The issuer, whose `/.well-known/openid-configuration` names the endpoints.
    pub issuer: String,
    /// The page's public client.
    pub client_id: String,
}

impl UiOidc {
    fn from_settings(settings: &ApiSettings) -> Option<Self> {
        let set = |v: &Option<String>| v.clone().filter(|v| !v.is_empty());
        Some(Self {
            issuer: set(&settings.auth.issuer)?,
            client_id: set(&settings.ui_oidc_client_id)?,
        })
    }

    /// The origins the page fetches from to sign in: the issuer's (its discovery document) and
    /// its token endpoint's, which the discovery document names (on Cognito, another host).
    /// Read once at start; if the document cannot be read, the issuer's origin alone.
    async fn origins(&self) -> Vec<String> {
        let mut origins: Vec<String> = origin_of(&self.issuer).into_iter().collect();
        let discovery = format!(
            "{}/.well-known/openid-configuration",
            self.issuer.trim_end_matches('/')
        );
        match fetch_json(&discovery).await {
            Ok(document) => origins.extend(
                document["token_endpoint"]
                    .as_str()
                    .and_then(origin_of)
                    .filter(|origin| !origins.contains(origin)),
            ),
            Err(error) => tracing::warn!(
                %error, url = %discovery,
                "cannot read the issuer's discovery document: the page may fetch from the \
                 issuer's origin only"
            ),
        }
        origins
    }
}

/// The origin (scheme, host and port) of `url`, if it is an absolute URL.
fn origin_of(url: &str) -> Option<String> {
    let origin = reqwest::Url::parse(url).ok()?.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

async fn fetch_json(url: &str) -> Result<serde_json::Value, reqwest::Error> {
    reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(5))
        .build()?
        .get(url)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await
}

impl FromRef<AppState> for Arc<SeatMaps> {
    fn from_ref(state: &AppState) -> Self {
        Arc::clone(&state.seat_maps)
    }
}

impl FromRef<AppState> for Backend {
    fn from_ref(state: &AppState) -> Self {
        state.backend.clone()
    }
}
