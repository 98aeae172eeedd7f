//! The router's state: the backend, and the access policy every request is checked against.

use std::sync::Arc;

use crate::auth::Authenticator;
use crate::long_poll::LongPolls;
use crate::rate::BuyerRate;
use crate::seat_maps::SeatMaps;
use crate::settings::ApiSettings;
use axum::extract::FromRef;
use seatclaim_shared::Backend;

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
}

impl AppState {
    /// The state of an API on `backend` under `access`, its seat maps at most `max_age` old;
    /// `runs_worker` when the worker runs in this process (admissions may then decide).
    #[must_use]
    pub fn new(
        backend: Backend,
        access: Access,
        seat_map_max_age: jiff::SignedDuration,
        runs_worker: bool,
    ) -> Self {
        Self(Arc::new(Shared {
            decides_on_admission: runs_worker,
            seat_maps: Arc::new(SeatMaps::new(backend.clone(), seat_map_max_age)),
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
    /// What the web page signs in with: the issuer and the OIDC client, when both are set.
    pub ui_oidc: Option<UiOidc>,
    /// Reservation POSTs per buyer.
    pub buyers: BuyerRate,
    /// The slots of requests waiting for a decision (`SEATCLAIM_MAX_LONG_POLLS`).
    pub long_polls: LongPolls,
}

impl Access {
    /// The access policy of `settings`: refuses contradictory authentication settings, and an
    /// AWS deployment (`on_aws`) left open by accident; warns when authentication is off.
    pub async fn from_settings(settings: &ApiSettings, on_aws: bool) -> Result<Self, String> {
        settings.auth.check(on_aws)?;
        let auth = Authenticator::from_settings(&settings.auth).await;
        if auth.is_none() {
            tracing::warn!(
                "authentication is off: anyone who reaches the API may act as any buyer \
                 (set SEATCLAIM_AUTH_JWKS_URL or SEATCLAIM_AUTH_HS256_SECRET)"
            );
        }
        Ok(Self {
            auth,
            admin_scope: settings.auth.admin_scope.clone(),
            creates_events: settings.api_creates_events,
            ui_oidc: UiOidc::from_settings(settings),
            buyers: BuyerRate::new(settings.buyer_rate, settings.buyer_burst),
            long_polls: LongPolls::new(&settings.limits),
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
