use seatclaim_runtime::backend;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;

use axum::http::{Method, StatusCode, header};
use seatclaim_api::auth::{AuthSettings, Authenticator};
use seatclaim_api::{
    Access, AppState, Application, BuyerRate, LongPolls, PaymentsMode, ReadBudget, SeatMapLimits,
    ServerLimits,
};
use seatclaim_core::Backend;
use seatclaim_embedded::EVENT_LOG_FILE;
use seatclaim_runtime::config::{AwsSettings, BackendKind, BackendSettings, Settlements};
use seatclaim_runtime::loops::{Worker, WorkerSettings};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use crate::client::{Call, Reply, Transport, TransportKind, test_transport};
use crate::faults::FaultSettings;
use crate::{JumpClock, emulator, eventually, test_backend, test_seed};

/// How to start an app for a test.
#[derive(Debug, Clone)]
pub struct AppOptions {
    /// Run the worker in the API process, as `cargo run` does by default.
    pub embedded_worker: bool,
    /// With the worker in the process, let an admission decide its claim in the same write (as
    /// the binary does); off, every intent goes through the queue to the worker.
    pub decide_on_admission: bool,
    /// Seconds before an unacknowledged intent is delivered again.
    pub visibility_timeout_secs: u64,
    /// The sweeper's period in milliseconds (large to keep lapsed holds in place for a test).
    pub sweep_interval_ms: u64,
    /// Attempts before an intent is dead-lettered.
    pub max_attempts: u32,
    /// Faults to inject into the app's backend.
    pub faults: FaultSettings,
    /// Turns authentication on with these settings (see [`hs256`]).
    pub auth: Option<AuthSettings>,
    /// `SEATCLAIM_BUYER_RATE` and `SEATCLAIM_BUYER_BURST`.
    pub buyer_rate: (u32, u32),
    /// The request bounds (timeouts, in-flight and long-poll caps).
    pub limits: ServerLimits,
    /// `SEATCLAIM_API_CREATES_EVENTS`.
    pub creates_events: bool,
    /// `SEATCLAIM_MAX_EVENT_SEATS`.
    pub max_event_seats: usize,
    /// `SEATCLAIM_DEFAULT_MAX_SEATS_PER_BUYER` (0: no limit); the shipped default unless a
    /// suite says otherwise.
    pub default_max_seats_per_buyer: u32,
    /// `SEATCLAIM_SEAT_MAP_MAX_AGE_MS`; 0 (the tests' default) reads the backend at every
    /// request, so a suite sees its own changes at once.
    pub seat_map_max_age_ms: i64,
    /// `SEATCLAIM_SEAT_MAP_READS_PER_SEC` and `SEATCLAIM_SEAT_MAP_READ_WAIT_MS`: the shipped
    /// defaults unless a suite says otherwise.
    pub read_budget: ReadBudget,
    /// `SEATCLAIM_PAYMENTS_STRIPE_WEBHOOK_SECRET`.
    pub stripe_webhook_secret: Option<String>,
    /// `SEATCLAIM_PAYMENTS`.
    pub payments: Option<PaymentsMode>,
    /// `SEATCLAIM_PAYMENTS_STRIPE_LIVEMODE`.
    pub stripe_livemode: bool,
    /// `SEATCLAIM_PAYMENTS_STRIPE_ACCOUNTS`.
    pub stripe_accounts: Vec<String>,
}

impl Default for AppOptions {
    fn default() -> Self {
        Self {
            embedded_worker: true,
            decide_on_admission: true,
            visibility_timeout_secs: 30,
            sweep_interval_ms: 100,
            max_attempts: 5,
            faults: FaultSettings::default(),
            auth: None,
            buyer_rate: (5, 10),
            limits: ServerLimits::default(),
            creates_events: true,
            max_event_seats: seatclaim_core::domain::MAX_SEATS_PER_EVENT,
            default_max_seats_per_buyer: seatclaim_core::domain::DEFAULT_SEAT_LIMIT,
            seat_map_max_age_ms: 0,
            read_budget: ReadBudget::default(),
            stripe_webhook_secret: None,
            payments: None,
            stripe_livemode: false,
            stripe_accounts: Vec::new(),
        }
    }
}

/// A running app with its own storage, its own clock, and a way to send it requests.
pub struct TestApp {
    /// The backend the app runs on, for tests that drive the worker's steps directly.
    pub backend: Backend,
    /// The settings that reach this app's backend, for processes started beside it.
    pub settings: BackendSettings,
    /// "Now" for the app, its in-process worker and [`TestApp::backend`]: wall-clock time plus
    /// an offset a test moves to pass a hold's deadline or age an intent without sleeping.
    /// Processes started beside the app (`seatclaimctl`, the binaries) keep the wall clock.
    pub clock: Arc<JumpClock>,
    http: Transport,
    /// The app's metrics endpoint (`None` in-process, where the recorder is read directly).
    metrics: Option<String>,
    events: PublishedEvents,
    /// The embedded backend's data folder, removed when the test ends.
    _data: TempDir,
    _stop: tokio_util::sync::DropGuard,
}

impl TestApp {
    /// Starts an app with the in-process worker and quick timings.
    pub async fn spawn() -> Self {
        Self::spawn_with(AppOptions::default()).await
    }

    /// Starts an app as `options` say, on the backend [`test_backend`] names, with fresh storage,
    /// reached over the transport [`test_transport`] names.
    pub async fn spawn_with(options: AppOptions) -> Self {
        // Logs stay quiet unless asked for: `TEST_LOG=1 cargo test ...` (filtered by RUST_LOG).
        if std::env::var_os("TEST_LOG").is_some() {
            seatclaim_runtime::telemetry::init(seatclaim_runtime::config::LogFormat::Text);
        }
        let data = tempfile::tempdir().expect("a temporary data folder");
        let (settings, events) = storage(&options, data.path()).await;
        let clock = Arc::new(JumpClock::default());
        // As on the stack: the API's backend sends settlements to the workers, whose backend
        // serves them (the in-process worker's, or the worker processes a test starts).
        let served = if options.embedded_worker {
            Settlements::ServedHere
        } else {
            Settlements::Here
        };
        let faults = seeded(&options.faults);
        let stop = CancellationToken::new();
        let backend = open_backend(&settings, served, &clock, &faults, &stop).await;
        let api_backend = match settings.backend {
            BackendKind::Aws => {
                let api = Settlements::SentToWorkers;
                open_backend(&settings, api, &clock, &faults, &stop).await
            }
            BackendKind::Embedded => backend.clone(),
        };
        let worker = options
            .embedded_worker
            .then(|| Worker::new(backend.clone(), Self::worker_settings(&options), &settings));
        let state = AppState::new(
            api_backend,
            access(&options).await,
            SeatMapLimits {
                max_age: SignedDuration::from_millis(options.seat_map_max_age_ms),
                budget: options.read_budget,
            },
            worker.is_some() && options.decide_on_admission,
            seatclaim_api::openapi::json(options.auth.is_some()),
        );
        let (http, metrics) = match test_transport() {
            TransportKind::Socket => serve_on_socket(state, worker, options.limits, &stop).await,
            TransportKind::InProcess => (serve_in_process(state, worker, &stop), None),
        };
        Self {
            backend,
            settings,
            clock,
            http,
            metrics,
            events,
            _data: data,
            _stop: stop.drop_guard(),
        }
    }

    fn worker_settings(options: &AppOptions) -> WorkerSettings {
        WorkerSettings {
            receive_wait_ms: 100,
            sweep_interval_ms: options.sweep_interval_ms,
            relay_interval_ms: 50,
            ..WorkerSettings::default()
        }
    }

    /// The environment a `seatclaim-*` process needs to work on this app's backend.
    pub fn process_env(&self) -> Vec<(&'static str, String)> {
        match self.settings.backend {
            BackendKind::Embedded => vec![(
                "SEATCLAIM_DATA_DIR",
                self.settings.data_dir.display().to_string(),
            )],
            BackendKind::Aws => vec![
                ("SEATCLAIM_BACKEND", "aws".to_owned()),
                ("SEATCLAIM_AWS_PREFIX", self.settings.aws.aws_prefix.clone()),
            ],
        }
    }

    /// Runs the real `seatclaimctl` on this app's backend with `args`; returns its exit code and
    /// its standard output.
    pub fn ctl(&self, args: &[&str]) -> (i32, String) {
        let output = std::process::Command::new(crate::binary("seatclaimctl"))
            .args(args)
            .envs(self.process_env())
            .env("RUST_BACKTRACE", "0")
            .output()
            .expect("seatclaimctl runs");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() {
            eprintln!(
                "seatclaimctl {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        (output.status.code().unwrap_or(-1), stdout)
    }

    /// Waits until the relays have published every recorded event, so that an audit after a
    /// burst judges a relay that kept up, not one still working through the burst on a slow
    /// emulator; a relay that is stuck fails the wait.
    pub async fn relay_caught_up(&self, within: Duration) {
        crate::eventually(
            within,
            "the relays to publish every recorded event",
            || async {
                let oldest = self.backend.outbox.oldest_unpublished().await.unwrap();
                oldest.is_none().then_some(())
            },
        )
        .await;
    }

    /// Runs `seatclaimctl audit` on the event and asserts that it passes.
    pub fn assert_audit_passes(&self, event_id: &str) -> Value {
        let (code, stdout) = self.ctl(&["audit", event_id, "--json"]);
        let report: Value = serde_json::from_str(stdout.trim()).expect("the audit prints JSON");
        assert_eq!(
            (code, &report["ok"]),
            (0, &Value::Bool(true)),
            "audit failed: {report}"
        );
        report
    }

    /// The reservation events the relay has published so far: the embedded event log's lines, or
    /// what an EventBridge rule delivered to a consumer queue (the envelope has the same fields).
    pub async fn published_events(&self) -> Vec<Value> {
        match &self.events {
            PublishedEvents::File(path) => std::fs::read_to_string(path)
                .unwrap_or_default()
                .lines()
                .map(|line| serde_json::from_str(line).expect("each event log line is JSON"))
                .collect(),
            PublishedEvents::Queue(consumer) => consumer.drain().await,
        }
    }

    /// The reservation events published, once at least `count` are (the relay and, on AWS,
    /// EventBridge's delivery to the consumer queue publish on their own schedule); fails after
    /// `within`. Read once more after, so that a check of the count also sees any sent twice.
    pub async fn published_at_least(&self, count: usize, within: Duration) -> Vec<Value> {
        crate::eventually(within, &format!("{count} published events"), || async {
            (self.published_events().await.len() >= count).then_some(())
        })
        .await;
        self.published_events().await
    }

    /// The first published event of `detail_type` (`SaleOpened`, ...), once there is one;
    /// fails after `within`.
    pub async fn published_of(&self, detail_type: &str, within: Duration) -> Value {
        crate::eventually(within, &format!("a published {detail_type}"), || async {
            (self.published_events().await.into_iter()).find(|e| e["detail-type"] == detail_type)
        })
        .await
    }

    /// Creates an event's access codes (`POST /v1/events/{id}/codes` with `body`), asserting
    /// the `201`; its answer.
    pub async fn create_codes(&self, event_id: &str, body: &Value) -> Value {
        let path = format!("/v1/events/{event_id}/codes");
        let created = self.request(Method::POST, &path).json(body).send().await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
        created.json()
    }

    /// The app's `host:port` when it is served on a socket.
    #[must_use]
    pub fn address(&self) -> Option<&str> {
        match &self.http {
            Transport::Socket { base, .. } => base.strip_prefix("http://"),
            Transport::InProcess(_) => None,
        }
    }

    /// The app's Prometheus metrics, from its metrics listener (the recorder itself in-process).
    pub async fn metrics(&self) -> String {
        match &self.metrics {
            Some(url) => reqwest::get(url).await.unwrap().text().await.unwrap(),
            None => seatclaim_runtime::telemetry::metrics().render(),
        }
    }

    /// Starts a request to this app over its transport, for requests the helpers do not make
    /// (malformed bodies, odd headers, other methods).
    pub fn request(&self, method: Method, path: &str) -> Call<'_> {
        self.http.request(method, path)
    }

    /// `POST /v1/events`.
    pub async fn create_event(&self, body: &Value) -> Reply {
        self.request(Method::POST, "/v1/events")
            .json(body)
            .send()
            .await
    }

    /// Creates an event of `rows` x `per_row` seats in section A with the given hold, and checks it worked.
    pub async fn create_grid(&self, event_id: &str, rows: u32, per_row: u32, hold_seconds: u32) {
        let response = self
            .create_event(&json!({
                "event_id": event_id,
                "name": "Test show",
                "hold_seconds": hold_seconds,
                "sections": [{"section": "A", "rows": rows, "seats_per_row": per_row}],
            }))
            .await;
        assert_eq!(response.status, StatusCode::CREATED, "{}", response.text());
    }

    /// `POST /v1/events/{event}/reservations` with an idempotency key.
    pub async fn reserve(&self, event_id: &str, key: &str, body: &Value) -> Reply {
        self.request(Method::POST, &format!("/v1/events/{event_id}/reservations"))
            .header("Idempotency-Key", key)
            .json(body)
            .send()
            .await
    }

    /// Reserves and returns the job id from the 202. A `503` (the request timed out: the
    /// emulator is slow under a whole suite's load) is retried with the same key, as a client
    /// is told to, a few times.
    pub async fn reserve_ok(&self, event_id: &str, key: &str, body: &Value) -> String {
        let mut response = self.reserve(event_id, key, body).await;
        for _ in 0..3 {
            if response.status != StatusCode::SERVICE_UNAVAILABLE {
                break;
            }
            response = self.reserve(event_id, key, body).await;
        }
        assert_eq!(response.status, StatusCode::ACCEPTED, "{}", response.text());
        response.json()["job_id"]
            .as_str()
            .expect("a job id")
            .to_owned()
    }

    /// `GET` a path, returning status and JSON body (null if the body is not JSON).
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let reply = self.request(Method::GET, path).send().await;
        (reply.status, json_or_null(&reply))
    }

    /// `GET` a path, returning status and the body as text.
    pub async fn get_text(&self, path: &str) -> (StatusCode, String) {
        let reply = self.request(Method::GET, path).send().await;
        (reply.status, reply.text())
    }

    /// `POST` with no body, returning status and JSON body (null if the body is not JSON).
    pub async fn post(&self, path: &str) -> (StatusCode, Value) {
        let reply = self.request(Method::POST, path).send().await;
        (reply.status, json_or_null(&reply))
    }

    /// `POST`s with no body and asserts the answer is a problem with `status`.
    pub async fn post_problem(&self, path: &str, status: StatusCode) -> Value {
        assert_problem(&self.request(Method::POST, path).send().await, status)
    }

    /// The job's current view.
    pub async fn job(&self, job_id: &str) -> Value {
        let (status, body) = self.get(&format!("/v1/jobs/{job_id}")).await;
        assert_eq!(status, StatusCode::OK, "GET job {job_id}: {body}");
        body
    }

    /// Polls the job until it leaves PENDING (or `within` passes, which fails the test).
    pub async fn decided(&self, job_id: &str, within: Duration) -> Value {
        let what = format!("job {job_id} to leave PENDING");
        eventually(within, &what, || async {
            let job = self.job(job_id).await;
            (job["status"] != "PENDING").then_some(job)
        })
        .await
    }

    /// The seat map of an event.
    pub async fn seat_map(&self, event_id: &str) -> Value {
        let (status, body) = self.get(&format!("/v1/events/{event_id}/seats")).await;
        assert_eq!(status, StatusCode::OK);
        body
    }

    /// One seat's state as the seat map shows it.
    pub async fn seat_state(&self, event_id: &str, seat_id: &str) -> Value {
        let map = self.seat_map(event_id).await;
        map["seats"]
            .as_array()
            .and_then(|seats| seats.iter().find(|s| s["seat_id"] == seat_id))
            .map(|s| s["state"].clone())
            .unwrap_or_else(|| panic!("seat {seat_id} is not in the map of {event_id}: {map}"))
    }
}

/// Where a test reads published events from.
enum PublishedEvents {
    File(std::path::PathBuf),
    Queue(emulator::EventConsumer),
}

/// Asserts that `reply` is an RFC 9457 problem with `status`, and returns its body.
pub fn assert_problem(reply: &Reply, status: StatusCode) -> Value {
    assert_eq!(reply.status, status, "{}", reply.text());
    assert_eq!(
        reply.header(header::CONTENT_TYPE.as_str()),
        "application/problem+json"
    );
    let body = reply.json();
    for field in ["type", "title", "detail"] {
        assert!(
            body[field].as_str().is_some_and(|s| !s.is_empty()),
            "problem lacks {field}: {body}"
        );
    }
    assert_eq!(body["status"], status.as_u16());
    let code = body["reason_code"].as_str().unwrap_or_default();
    assert!(
        seatclaim_core::domain::ReasonCode::parse(code).is_some(),
        "problem lacks a known reason_code: {body}"
    );
    body
}

fn json_or_null(reply: &Reply) -> Value {
    serde_json::from_slice(&reply.body).unwrap_or(Value::Null)
}

/// The backend settings for a fresh store (a temporary folder, or a fresh prefix on the
/// emulator, provisioned), and where the test reads the events published from it.
/// Opens the app's backend with settlements made where `settlements` says, `faults` around it,
/// and its background tasks running until `stop`, as the services run them.
async fn open_backend(
    settings: &BackendSettings,
    settlements: Settlements,
    clock: &Arc<JumpClock>,
    faults: &FaultSettings,
    stop: &CancellationToken,
) -> Backend {
    let settings = BackendSettings {
        aws: AwsSettings {
            settlements,
            ..settings.aws.clone()
        },
        ..settings.clone()
    };
    let opened = backend::open_with_clock(&settings, clock.clone())
        .await
        .expect("the backend opens");
    for task in opened.tasks {
        tokio::spawn(task.run(stop.clone()));
    }
    faults.clone().inject(opened.backend)
}

/// The faults to inject, drawing from the test's printed seed unless they name their own, so a
/// failing run replays.
fn seeded(faults: &FaultSettings) -> FaultSettings {
    FaultSettings {
        seed: (faults.any() && faults.seed.is_none())
            .then(test_seed)
            .or(faults.seed),
        ..faults.clone()
    }
}

async fn storage(options: &AppOptions, data: &Path) -> (BackendSettings, PublishedEvents) {
    let mut settings = BackendSettings {
        visibility_timeout_secs: options.visibility_timeout_secs,
        max_attempts: options.max_attempts,
        ..BackendSettings::in_folder(data.to_owned())
    };
    let events = match test_backend() {
        BackendKind::Embedded => PublishedEvents::File(data.join(EVENT_LOG_FILE)),
        BackendKind::Aws => {
            let config = emulator::emulator_config().await;
            settings.backend = BackendKind::Aws;
            settings.aws = emulator::fresh_settings();
            emulator::provision(
                &config,
                &settings.aws,
                settings.visibility_timeout(),
                settings.max_receive_count(),
            )
            .await;
            PublishedEvents::Queue(emulator::EventConsumer::subscribe(&config, &settings.aws).await)
        }
    };
    (settings, events)
}

/// Authentication settings with only an HS256 secret (and the default admin scope); the app
/// refuses a secret shorter than 32 bytes, as the binary does.
#[must_use]
pub fn hs256(secret: &str) -> AuthSettings {
    AuthSettings {
        jwks_url: None,
        hs256_secret: Some(secret.to_owned()),
        issuer: None,
        audience: None,
        admin_scope: seatclaim_core::identity::DEFAULT_ADMIN_SCOPE.to_owned(),
        mode: None,
        token_use: None,
        jwks_refresh_secs: 300,
    }
}

/// The access policy `options` ask for: authenticated if they carry settings, else open.
async fn access(options: &AppOptions) -> Access {
    let (auth, admin_scope) = match &options.auth {
        Some(settings) => {
            // The binary's own check: a test's secret and JWKS pass what a deployment's must.
            if let Err(refused) = settings.check(false, true) {
                panic!("the test's authentication settings are refused: {refused}");
            }
            (
                Authenticator::from_settings(settings).await,
                settings.admin_scope.clone(),
            )
        }
        None => (
            None,
            seatclaim_core::identity::DEFAULT_ADMIN_SCOPE.to_owned(),
        ),
    };
    let stripe = options
        .stripe_webhook_secret
        .as_deref()
        .and_then(seatclaim_api::stripe::WebhookSecret::new)
        .map(|secret| seatclaim_api::stripe::StripeEndpoint {
            secret,
            scope: seatclaim_api::stripe::StripeScope::new(
                options.stripe_livemode,
                &options.stripe_accounts,
            )
            .expect("the test's Stripe accounts are account ids"),
        });
    Access {
        code_key: Some(test_code_key()),
        payments_required: PaymentsMode::required(
            options.payments,
            auth.is_some(),
            stripe.is_some(),
        ),
        stripe,
        auth,
        admin_scope,
        creates_events: options.creates_events,
        max_event_seats: options.max_event_seats,
        default_seat_limit: seatclaim_core::domain::SeatLimit::optional(
            options.default_max_seats_per_buyer,
        )
        .expect("a default seat limit of 0 to 100"),
        ui_oidc: None,
        page_origins: Vec::new(),
        token_links: options
            .auth
            .as_ref()
            .is_none_or(AuthSettings::allows_token_links),
        buyers: BuyerRate::new(options.buyer_rate.0, options.buyer_rate.1),
        long_polls: LongPolls::new(&options.limits),
        body_read_timeout: options.limits.body_read_timeout(),
    }
}

/// Serves the app as the binary does, on a free local port, until `stop` is cancelled; returns
/// its transport and its metrics URL.
async fn serve_on_socket(
    state: AppState,
    worker: Option<Worker>,
    limits: ServerLimits,
    stop: &CancellationToken,
) -> (Transport, Option<String>) {
    let any_port = "127.0.0.1:0".parse().expect("an address");
    let app = Application::build(
        state,
        any_port,
        any_port,
        worker,
        Duration::from_secs(5),
        limits,
    )
    .await
    .expect("the app binds a free port");
    let base = format!("http://{}", app.local_addr().expect("a bound address"));
    let metrics = format!("http://{}/metrics", app.metrics_addr());
    tokio::spawn(app.run_until_stopped(stop.clone().cancelled_owned()));
    // The server closes a connection idle past its header-read timeout (10 s by default); a
    // client that kept it longer could send on a socket the server is closing.
    let client = reqwest::Client::builder()
        .pool_idle_timeout(Duration::from_secs(5))
        .build()
        .expect("an HTTP client");
    let transport = Transport::Socket { base, client };
    (transport, Some(metrics))
}

/// The app's router with no listener, and its worker running until `stop` is cancelled.
fn serve_in_process(
    state: AppState,
    worker: Option<Worker>,
    stop: &CancellationToken,
) -> Transport {
    // `/metrics` renders the process-wide recorder, which `Application::build` would install.
    seatclaim_runtime::telemetry::metrics();
    if let Some(worker) = worker {
        tokio::spawn(worker.run(stop.clone()));
    }
    Transport::InProcess(seatclaim_api::router(state))
}

/// The access-code key of the apps the tests start in process (`TEST_CODE_KEY`); a test hashes
/// a code with it to find its hash in the store.
#[must_use]
pub fn test_code_key() -> seatclaim_core::domain::CodeKey {
    seatclaim_core::domain::CodeKey::new(TEST_CODE_KEY.as_bytes().to_vec())
        .expect("the test key is long enough")
}

/// The access-code key of the tests' apps, in process and as `SEATCLAIM_ACCESS_CODE_KEY` of
/// the services they start.
pub const TEST_CODE_KEY: &str = "seatclaim-test-access-code-key-0123456789";
