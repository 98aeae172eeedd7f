use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;

use crate::auth::AuthSettings;

/// The API process's own settings (the backend's are shared with the worker).
#[derive(Debug, Clone, Args)]
pub struct ApiSettings {
    /// Address to listen on; port 0 picks a free one (the bound address is logged).
    #[arg(long, env = "SEATCLAIM_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Address of `/metrics` (Prometheus) and `/healthz`: kept off the public listener, for the
    /// scraper alone.
    #[arg(
        long,
        env = "SEATCLAIM_METRICS_LISTEN",
        default_value = "127.0.0.1:9091"
    )]
    pub metrics_listen: SocketAddr,

    /// Run the claim worker inside the API process (the one-command local setup). Turn off when
    /// `seatclaim-worker` runs as its own process.
    #[arg(long, env = "SEATCLAIM_EMBEDDED_WORKER", default_value_t = true, action = clap::ArgAction::Set)]
    pub embedded_worker: bool,

    /// Seconds to let in-flight requests finish after a stop signal before closing them.
    #[arg(long, env = "SEATCLAIM_SHUTDOWN_GRACE_SECS", default_value_t = 20)]
    pub shutdown_grace_secs: u64,

    /// Reservation POSTs a buyer may make per second, on average.
    #[arg(long, env = "SEATCLAIM_BUYER_RATE", default_value_t = 5)]
    pub buyer_rate: u32,

    /// Reservation POSTs a buyer may make at once.
    #[arg(long, env = "SEATCLAIM_BUYER_BURST", default_value_t = 10)]
    pub buyer_burst: u32,

    /// Whether `POST /v1/events` creates events. A stack turns it off, so that the API's role
    /// needs no right to write new seats: its operators create events with `seatclaimctl events
    /// create`, under their own role, and the API answers 403 saying so.
    #[arg(long, env = "SEATCLAIM_API_CREATES_EVENTS", default_value_t = true, action = clap::ArgAction::Set)]
    pub api_creates_events: bool,

    /// The most seats an event created through the API may have (at most 200,000, the
    /// domain's own bound).
    #[arg(long, env = "SEATCLAIM_MAX_EVENT_SEATS", default_value_t = 200_000,
          value_parser = clap::value_parser!(u32).range(1..=200_000))]
    pub max_event_seats: u32,

    /// How old a seat map may be before a request rebuilds it, in milliseconds: the backend
    /// sees at most one seat-map read per event per interval per API process. 0 reads the
    /// backend at every request.
    #[arg(long, env = "SEATCLAIM_SEAT_MAP_MAX_AGE_MS", default_value_t = 1000)]
    pub seat_map_max_age_ms: u64,

    /// The OpenID Connect client the buyer web page signs in with (authorization code with
    /// PKCE against `SEATCLAIM_AUTH_ISSUER`); unset, the page takes a pasted token instead.
    #[arg(long, env = "SEATCLAIM_UI_OIDC_CLIENT_ID")]
    pub ui_oidc_client_id: Option<String>,

    /// Stripe's signing secret of `POST /v1/payments/stripe` (`whsec_...`). Set, a priced
    /// hold is sold by its payment: the buyer's own confirm of it answers 402.
    #[arg(
        long,
        env = "SEATCLAIM_PAYMENTS_STRIPE_WEBHOOK_SECRET",
        hide_env_values = true
    )]
    pub stripe_webhook_secret: Option<String>,

    /// How callers authenticate.
    #[command(flatten)]
    pub auth: AuthSettings,

    /// What one request, and all of them together, may take.
    #[command(flatten)]
    pub limits: ServerLimits,
}

impl ApiSettings {
    /// The seat maps' maximum age.
    #[must_use]
    pub fn seat_map_max_age(&self) -> jiff::SignedDuration {
        jiff::SignedDuration::from_millis(
            i64::try_from(self.seat_map_max_age_ms).unwrap_or(i64::MAX),
        )
    }
}

/// Bounds on requests, so that slow or numerous clients degrade into quick refusals instead of
/// slowing every buyer down. The defaults refuse none of the load generator's or the
/// benchmarks' default runs.
#[derive(Debug, Clone, Copy, Args)]
pub struct ServerLimits {
    /// Seconds a request may take from its headers to its response (a long poll waits at most
    /// 20); past it the answer is 503.
    #[arg(long, env = "SEATCLAIM_REQUEST_TIMEOUT_SECS", default_value_t = 30)]
    pub request_timeout_secs: u64,
    /// Seconds a client may take to send a request's headers; past it the connection is closed.
    #[arg(long, env = "SEATCLAIM_HEADER_READ_TIMEOUT_SECS", default_value_t = 10)]
    pub header_read_timeout_secs: u64,
    /// Seconds a client may take to send a request's body once its headers are in; past it the
    /// answer is 408 and the connection is closed.
    #[arg(long, env = "SEATCLAIM_BODY_READ_TIMEOUT_SECS", default_value_t = 10)]
    pub body_read_timeout_secs: u64,
    /// Requests in flight at once; past it a request is answered 503 with `Retry-After` at
    /// once (load shedding) instead of waiting.
    #[arg(long, env = "SEATCLAIM_MAX_IN_FLIGHT", default_value_t = 4096)]
    pub max_in_flight: usize,
    /// Long polls (`GET /v1/jobs/{id}?wait=N`, and reservations sent with `Prefer: wait=N`) waiting at once; past it a poll is answered at
    /// once, with the job as it stands.
    #[arg(long, env = "SEATCLAIM_MAX_LONG_POLLS", default_value_t = 1024)]
    pub max_long_polls: usize,
    /// The longest a reservation POST sent with `Prefer: wait=N` waits for its decision, in
    /// seconds; past it (or with no long-poll slot free) it is answered 202. 0 never waits.
    #[arg(long, env = "SEATCLAIM_MAX_PREFER_WAIT_SECS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(0..=20))]
    pub max_prefer_wait_secs: u64,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            request_timeout_secs: 30,
            header_read_timeout_secs: 10,
            body_read_timeout_secs: 10,
            max_in_flight: 4096,
            max_long_polls: 1024,
            max_prefer_wait_secs: 10,
        }
    }
}

impl ServerLimits {
    /// How long a request's body may take to arrive.
    #[must_use]
    pub fn body_read_timeout(&self) -> Duration {
        Duration::from_secs(self.body_read_timeout_secs.max(1))
    }
}

impl ApiSettings {
    /// The shutdown grace period.
    #[must_use]
    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_secs)
    }
}
