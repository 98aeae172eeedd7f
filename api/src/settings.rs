use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;

use crate::auth::AuthSettings;
use crate::seat_maps::{DEFAULT_READ_WAIT_MS, DEFAULT_READS_PER_SEC, ReadBudget, SeatMapLimits};

/// The API process's own settings (the backend's are shared with the worker).
#[derive(Debug, Clone, Args)]
pub struct ApiSettings {
    /// The key access codes are hashed with (32 bytes or more; keep it secret, as a password
    /// hash's pepper). Unset: the embedded backend makes one in its data folder; on AWS codes
    /// are off.
    #[arg(long, env = "SEATCLAIM_ACCESS_CODE_KEY", hide_env_values = true)]
    pub access_code_key: Option<String>,

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

    /// The seat-map answers this process sends per second, in tokens: an answer costs one,
    /// plus one per started 16 KiB of body it sends (a 304 one; the whole 10,000-seat map 33
    /// uncompressed, 3 gzip-compressed). Past it a read waits its turn, then is shed with 503;
    /// reservations never wait behind it. 0 sends every answer at once.
    #[arg(long, env = "SEATCLAIM_SEAT_MAP_READS_PER_SEC", default_value_t = DEFAULT_READS_PER_SEC)]
    pub seat_map_reads_per_sec: u32,

    /// How long a seat-map read waits for its turn in the budget before it is answered 503 with
    /// `Retry-After: 1`, in milliseconds.
    #[arg(long, env = "SEATCLAIM_SEAT_MAP_READ_WAIT_MS", default_value_t = DEFAULT_READ_WAIT_MS)]
    pub seat_map_read_wait_ms: u64,

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

    /// Whether the webhook takes live payments (`true`) or Stripe's test mode's (`false`): an
    /// event whose `livemode` differs pays for nothing. The stack sets it to true.
    #[arg(long, env = "SEATCLAIM_PAYMENTS_STRIPE_LIVEMODE", default_value_t = false, action = clap::ArgAction::Set)]
    pub stripe_livemode: bool,

    /// The Stripe Connect accounts (`acct_...`, comma-separated) whose events pay; unset, only
    /// the platform's own events (which name no `account`) do.
    #[arg(
        long,
        env = "SEATCLAIM_PAYMENTS_STRIPE_ACCOUNTS",
        value_delimiter = ','
    )]
    pub stripe_accounts: Vec<String>,

    /// Whether a priced hold is sold by its payment alone. Unset, it is whenever callers are
    /// authenticated or a payment provider is configured; `off` is the explicit development
    /// opt-out (confirms sell priced holds free), refused beyond the loopback interface and
    /// beside a provider; `on` requires payments even with neither.
    #[arg(long = "payments", env = "SEATCLAIM_PAYMENTS")]
    pub payments: Option<PaymentsMode>,

    /// How callers authenticate.
    #[command(flatten)]
    pub auth: AuthSettings,

    /// What an event created without terms of its own gets.
    #[command(flatten)]
    pub event_defaults: seatclaim_runtime::cli::EventDefaultsArgs,

    /// What one request, and all of them together, may take.
    #[command(flatten)]
    pub limits: ServerLimits,
}

impl ApiSettings {
    /// The seat maps' maximum age and read budget.
    #[must_use]
    pub fn seat_map_limits(&self) -> SeatMapLimits {
        SeatMapLimits {
            max_age: jiff::SignedDuration::from_millis(
                i64::try_from(self.seat_map_max_age_ms).unwrap_or(i64::MAX),
            ),
            budget: ReadBudget {
                per_sec: self.seat_map_reads_per_sec,
                wait: std::time::Duration::from_millis(self.seat_map_read_wait_ms),
            },
        }
    }
}

/// `SEATCLAIM_PAYMENTS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PaymentsMode {
    /// A priced hold is sold by its payment alone.
    On,
    /// A buyer's confirm sells a priced hold free (development only).
    Off,
}

impl PaymentsMode {
    /// Whether priced holds wait for their payment under `mode`: unless told otherwise, as soon
    /// as callers are `authenticated` (a deployment serving real buyers) or a `provider` takes
    /// payments, so a stack whose provider secret went missing still sells nothing free.
    #[must_use]
    pub fn required(mode: Option<Self>, authenticated: bool, provider: bool) -> bool {
        match mode {
            Some(Self::On) => true,
            Some(Self::Off) => false,
            None => authenticated || provider,
        }
    }

    /// Refuses `off` on an API listening beyond the loopback interface (`local` false), where
    /// real buyers could reach it, and beside a configured `provider`, which it contradicts.
    pub fn check(mode: Option<Self>, local: bool, provider: bool) -> Result<(), String> {
        match mode {
            Some(Self::Off) if provider => Err("SEATCLAIM_PAYMENTS=off contradicts \
                 SEATCLAIM_PAYMENTS_STRIPE_WEBHOOK_SECRET"
                .into()),
            Some(Self::Off) if !local => Err("SEATCLAIM_PAYMENTS=off sells priced seats free: \
                 it is refused beyond the loopback interface"
                .into()),
            _ => Ok(()),
        }
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
    /// Long polls one buyer (a token's subject; with authentication off, a reservation's
    /// `buyer_id`) holds at once, at least 1; past it a `GET /v1/jobs/{id}?wait=N` is answered
    /// 429 and a `Prefer: wait` reservation 202 at once. Admin and payments tokens are not
    /// counted per buyer.
    #[arg(long, env = "SEATCLAIM_MAX_LONG_POLLS_PER_BUYER", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_long_polls_per_buyer: u32,
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
            max_long_polls_per_buyer: 4,
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

#[cfg(test)]
mod tests {
    use super::PaymentsMode;

    #[test]
    fn payments_are_required_once_buyers_are_authenticated_or_a_provider_is_set() {
        assert!(!PaymentsMode::required(None, false, false));
        assert!(PaymentsMode::required(None, true, false));
        assert!(PaymentsMode::required(None, false, true));
        assert!(!PaymentsMode::required(
            Some(PaymentsMode::Off),
            true,
            false
        ));
        assert!(PaymentsMode::required(Some(PaymentsMode::On), false, false));
    }

    #[test]
    fn payments_off_is_refused_beyond_the_loopback_interface_and_beside_a_provider() {
        assert!(PaymentsMode::check(Some(PaymentsMode::Off), true, false).is_ok());
        assert!(PaymentsMode::check(Some(PaymentsMode::Off), false, false).is_err());
        assert!(PaymentsMode::check(Some(PaymentsMode::Off), true, true).is_err());
        assert!(PaymentsMode::check(None, false, true).is_ok());
        assert!(PaymentsMode::check(Some(PaymentsMode::On), false, false).is_ok());
    }
}
