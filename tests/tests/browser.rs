//! The buyer page (`api/ui/`) in a real browser: each scenario is a node script in
//! `tests/browser/` that drives Debian's Chromium through playwright-core against an app served
//! on a socket: the whole flow to SOLD, a rejection, a cancel, an expiry, seats together (a block
//! ringed on the map, and a new try straight after a rejection), a reload while PENDING
//! (one reservation, however often the page is reloaded or clicked), a reservation sent before a
//! sale's opening (the countdown, the line for the opening, the hold after it), keyboard-only
//! use, a presale code typed on the form, a bearer token with authentication on, and signing in with OpenID Connect (authorization
//! code with PKCE) at a test identity provider (`tests/src/oidc_issuer.rs`) against the real
//! `seatclaim-api` binary configured for it. With `SEATCLAIM_SCREENSHOTS=1` it also refreshes the
//! pictures in `docs/screenshots/`. `bash tests/browser/install.sh` installs what it needs
//! (`tests/run.sh` runs it); without Chromium or the node modules the suite fails and says so.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use axum::http::{Method, StatusCode};
use jiff::{SignedDuration, Timestamp};
use seatclaim_core::domain::SeatState;
use seatclaim_core::ports::Clock;
use seatclaim_e2e::oidc_issuer::{TestIssuer, s256_challenge};
use seatclaim_e2e::tokens::{claims, hs256_token};
use seatclaim_e2e::{AppOptions, ChildProcess, TestApp, hs256};
use seatclaim_runtime::loops::{Worker, WorkerSettings};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Where the install step puts Chromium (playwright-core cannot download a browser here).
const CHROMIUM: &str = "/usr/bin/chromium";
/// A bound on a failing run only: each script also gives up by itself after 180 s.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(240);
const WITHIN: Duration = Duration::from_secs(30);

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("browser")
}

/// Fails, saying how to install them, unless Chromium and the scripts' node modules are there.
fn require_browser() {
    let modules = scripts().join("node_modules").join("playwright-core");
    assert!(
        Path::new(CHROMIUM).exists() && modules.exists(),
        "the browser suite needs {CHROMIUM} and tests/browser/node_modules: run the install step \
         `bash tests/browser/install.sh` (as root it runs `apt-get install -y chromium`, then \
         `npm ci` in tests/browser)"
    );
}

/// Starts an app as `options` say, or returns `None` (saying so) when the suites run
/// in-process, where no browser can reach it.
async fn app_with(options: AppOptions) -> Option<TestApp> {
    let app = TestApp::spawn_with(options).await;
    if app.address().is_none() {
        println!("skipped: a browser needs the app on a socket (SEATCLAIM_TEST_TRANSPORT=socket)");
        return None;
    }
    require_browser();
    Some(app)
}

/// Runs `tests/browser/<scenario>.mjs` against the app with `env`, and returns what it printed;
/// fails with its whole output unless it exits 0.
async fn run(app: &TestApp, scenario: &str, env: &[(&str, &str)]) -> String {
    run_at(&format!("http://{}", app.address().unwrap()), scenario, env).await
}

/// [`run`] against the API at `url`.
async fn run_at(url: &str, scenario: &str, env: &[(&str, &str)]) -> String {
    let child = Command::new("node")
        .arg(scripts().join(format!("{scenario}.mjs")))
        .env("SEATCLAIM_URL", url)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs (Node 20 or later is needed)");
    let pid = child.id();
    // Waited for on the blocking pool: the app serves the browser from this test's runtime.
    let waiting = tokio::task::spawn_blocking(move || child.wait_with_output());
    let Ok(joined) = tokio::time::timeout(SCENARIO_TIMEOUT, waiting).await else {
        // Our own child, by its id; the blocking task then returns.
        let _ = Command::new("kill").arg(pid.to_string()).status();
        panic!("tests/browser/{scenario}.mjs ran past {SCENARIO_TIMEOUT:?}");
    };
    let output = joined.unwrap().expect("node's output");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "tests/browser/{scenario}.mjs failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    print!("{stdout}{stderr}");
    stdout
}

/// The seats of an event in `state`.
fn seats_in<'a>(map: &'a Value, state: &str) -> Vec<&'a str> {
    map["seats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|seat| seat["state"] == state)
        .map(|seat| seat["seat_id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_buyer_picks_two_seats_sees_the_hold_count_down_and_buys_them() {
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    app.create_grid("e1", 2, 5, 300).await;
    run(&app, "flow", &[("SEATCLAIM_EVENT", "e1")]).await;
    let map = app.seat_map("e1").await;
    assert_eq!(seats_in(&map, "SOLD"), ["A-1-1", "A-1-2"], "{map}");
}

#[tokio::test]
async fn a_seat_another_buyer_took_first_is_rejected_with_its_reason() {
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    app.create_grid("e1", 2, 5, 300).await;
    run(&app, "rejection", &[("SEATCLAIM_EVENT", "e1")]).await;
    assert_eq!(seats_in(&app.seat_map("e1").await, "HELD"), ["A-1-1"]);
}

#[tokio::test]
async fn a_presale_code_typed_on_the_page_opens_the_channels_seats() {
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    let created = app
        .create_event(&json!({"event_id": "pre", "name": "Presale",
            "channels": [{"name": "fanclub"}],
            "sections": [
                {"section": "F", "rows": 1, "seats_per_row": 4, "channel": "fanclub"},
                {"section": "A", "rows": 1, "seats_per_row": 4}]}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let codes = app
        .request(Method::POST, "/v1/events/pre/codes")
        .json(&json!({"channel": "fanclub", "codes": ["FAN-PAGE"], "max_seats": 2}))
        .send()
        .await;
    assert_eq!(codes.status, StatusCode::CREATED, "{}", codes.text());
    let env = [("SEATCLAIM_EVENT", "pre"), ("SEATCLAIM_CODE", "FAN-PAGE")];
    let out = run(&app, "presale", &env).await;
    assert!(out.contains("PRESALE_JOB="), "{out}");
    let (_, standing) = app.get("/v1/events/pre/codes/FAN-PAGE").await;
    assert_eq!(standing["held"], 1, "{standing}");
}

#[tokio::test]
async fn a_released_hold_puts_its_seat_back_on_sale() {
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    app.create_grid("e1", 2, 5, 300).await;
    run(&app, "cancel", &[("SEATCLAIM_EVENT", "e1")]).await;
}

#[tokio::test]
async fn a_priced_hold_shows_what_to_pay_and_waits_for_its_payment() {
    let options = AppOptions {
        stripe_webhook_secret: Some(seatclaim_e2e::stripe::SECRET.to_owned()),
        ..AppOptions::default()
    };
    let Some(app) = app_with(options).await else {
        return;
    };
    let created = app
        .create_event(
            &json!({"event_id": "paid", "name": "Priced", "currency": "EUR",
            "sections": [{"section": "A", "rows": 1, "seats_per_row": 4, "price": 2500}]}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    run(&app, "payment", &[("SEATCLAIM_EVENT", "paid")]).await;
}

#[tokio::test]
async fn a_buyer_extends_a_hold_from_the_page_once_as_the_event_allows() {
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    let created = app
        .create_event(
            &json!({"event_id": "ext", "name": "Extendable", "hold_seconds": 300,
            "hold_extension_seconds": 600, "max_hold_extensions": 1,
            "sections": [{"section": "A", "rows": 1, "seats_per_row": 4}]}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    run(&app, "extend", &[("SEATCLAIM_EVENT", "ext")]).await;
    let event = seatclaim_core::domain::EventId::parse("ext").unwrap();
    let map = app.backend.catalog.seat_map(&event).await.unwrap().unwrap();
    let Some(SeatState::Held { until, .. }) = map
        .iter()
        .find(|seat| seat.seat_id.as_str() == "A-1-2")
        .map(|seat| seat.state)
    else {
        panic!("A-1-2 is held: {map:?}");
    };
    let left = until.duration_since(app.clock.now());
    assert!(
        left > SignedDuration::from_secs(600),
        "the hold was extended: {left:?} left"
    );
}

#[tokio::test]
async fn a_buyer_waits_on_the_waitlist_and_is_served_when_a_seat_comes_free() {
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    let created = app
        .create_event(&json!({"event_id": "wl", "name": "Lined", "waitlist": true,
            "sections": [{"section": "W", "rows": 1, "seats_per_row": 1}]}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    let blocker = app
        .reserve_ok(
            "wl",
            "blocker",
            &json!({"buyer_id": "gus", "seat_ids": ["W-1-1"]}),
        )
        .await;
    assert_eq!(app.decided(&blocker, WITHIN).await["status"], "HELD");
    run(
        &app,
        "waitlist",
        &[
            ("SEATCLAIM_EVENT", "wl"),
            ("SEATCLAIM_BLOCKER_JOB", &blocker),
        ],
    )
    .await;
    assert_eq!(seats_in(&app.seat_map("wl").await, "HELD"), ["W-1-1"]);
}

/// Seats together: the page asks for 3 seats together in section A (a row of 6) and rings the
/// block it holds; another buyer's 4 together (more than the row has left) is REJECTED, and that page
/// reserves a seat it picks straight after, under a new key, without "New reservation".
#[tokio::test]
async fn a_buyer_holds_seats_together_and_another_tries_again_straight_after_a_rejection() {
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    let created = app
        .create_event(
            &json!({"event_id": "tg", "name": "Together", "hold_seconds": 300,
            "sections": [{"section": "A", "rows": 1, "seats_per_row": 6}]}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let printed = run(&app, "together", &[("SEATCLAIM_EVENT", "tg")]).await;
    let job_id = |name: &str| {
        printed
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .unwrap_or_else(|| panic!("the script prints {name}"))
            .to_owned()
    };
    let block = app.job(&job_id("TOGETHER_JOB=")).await;
    assert_eq!(
        (&block["status"], &block["buyer_id"]),
        (&json!("HELD"), &json!("tess")),
        "{block}"
    );
    assert_eq!(block["seat_ids"].as_array().unwrap().len(), 3, "{block}");
    let rejected = app.job(&job_id("REJECTED_JOB=")).await;
    assert_eq!(
        (
            &rejected["status"],
            &rejected["reason"],
            &rejected["reason_code"],
            &rejected["buyer_id"]
        ),
        (
            &json!("REJECTED"),
            &json!("no 4 adjacent seats in section A"),
            &json!("no_adjacent_seats"),
            &json!("uma")
        ),
        "{rejected}"
    );
    let single = app.job(&job_id("SINGLE_JOB=")).await;
    assert_eq!(
        (&single["status"], &single["buyer_id"]),
        (&json!("HELD"), &json!("uma")),
        "{single}"
    );
    assert_eq!(single["seat_ids"].as_array().unwrap().len(), 1, "{single}");
    assert_eq!(seats_in(&app.seat_map("tg").await, "HELD").len(), 4);
}

/// How long after the event is created its sale opens in the opening scenario: time for a
/// browser to come up and reserve from two pages before it on a busy machine (the script fails
/// saying so if it could not), and little enough to wait through.
const OPENS_IN: SignedDuration = SignedDuration::from_secs(30);

/// A sale that opens [`OPENS_IN`] from now, on the app's clock (the wall clock: the page counts
/// down on it): the page reserves before the start and shows it waiting in the line for the
/// opening, and the in-process worker draws the one pre-queued intent at the start and holds its
/// seat.
#[tokio::test]
async fn a_buyer_reserves_before_the_opening_waits_in_its_line_and_is_held_after_it() {
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    // Whole seconds, as organisers announce a start.
    let starts = Timestamp::from_second(app.clock.now().as_second()).unwrap() + OPENS_IN;
    let created = app
        .create_event(
            &json!({"event_id": "op", "name": "Opening", "hold_seconds": 300,
            "sale_starts_at": starts.to_string(),
            "sections": [{"section": "O", "rows": 1, "seats_per_row": 2}]}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let printed = run(
        &app,
        "opening",
        &[
            ("SEATCLAIM_EVENT", "op"),
            ("SEATCLAIM_OPENS_AT", &starts.to_string()),
        ],
    )
    .await;
    let job_id = printed
        .lines()
        .find_map(|line| line.strip_prefix("JOB_ID="))
        .expect("the script prints the job id");
    let job = app.job(job_id).await;
    assert_eq!(
        (&job["status"], &job["buyer_id"]),
        (&json!("HELD"), &json!("olga")),
        "{job}"
    );
    // The page's reservation went through the pre-queue, once: its second page's was refused.
    let event = seatclaim_core::domain::EventId::parse("op").unwrap();
    let opening = app
        .backend
        .catalog
        .opening(&event, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(opening.prequeued, 1, "{opening:?}");
    assert_eq!(opening.draw.map(|draw| draw.shuffled), Some(1));
    assert_eq!(seats_in(&app.seat_map("op").await, "HELD").len(), 1);
}

#[tokio::test]
async fn a_hold_nobody_confirms_shows_expired_by_itself() {
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    app.create_grid("e1", 1, 4, 2).await;
    run(&app, "expiry", &[("SEATCLAIM_EVENT", "e1")]).await;
}

/// The app runs without a worker, so the job stays PENDING while the page is reloaded; then a
/// worker decides it, and the event holds the seats of exactly one reservation.
#[tokio::test]
async fn a_reload_while_pending_resumes_the_same_job_and_reserves_once() {
    let Some(app) = app_with(AppOptions {
        embedded_worker: false,
        ..AppOptions::default()
    })
    .await
    else {
        return;
    };
    app.create_grid("e1", 2, 5, 300).await;
    let printed = run(&app, "reload", &[("SEATCLAIM_EVENT", "e1")]).await;
    let job_id = printed
        .lines()
        .find_map(|line| line.strip_prefix("JOB_ID="))
        .expect("the script prints the job id");
    assert_eq!(app.job(job_id).await["status"], "PENDING");

    let stop = CancellationToken::new();
    let settings = WorkerSettings {
        receive_wait_ms: 100,
        ..WorkerSettings::default()
    };
    let worker = Worker::new(app.backend.clone(), settings, &app.settings);
    tokio::spawn(worker.run(stop.clone()));
    let job = app.decided(job_id, WITHIN).await;
    assert_eq!(job["status"], "HELD", "{job}");
    // The page asked for any 2 seats in A: a second reservation would hold 2 more.
    let held = app.seat_map("e1").await;
    assert_eq!(seats_in(&held, "HELD").len(), 2, "{held}");
    stop.cancel();
}

#[tokio::test]
async fn a_buyer_reserves_with_the_keyboard_alone() {
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    app.create_grid("e1", 2, 5, 300).await;
    run(&app, "keyboard", &[("SEATCLAIM_EVENT", "e1")]).await;
}

#[tokio::test]
async fn with_authentication_on_the_page_sends_the_buyers_bearer_token() {
    const SECRET: &str = "browser-test-secret-of-a-decent-length";
    let Some(app) = app_with(AppOptions {
        auth: Some(hs256(SECRET)),
        ..AppOptions::default()
    })
    .await
    else {
        return;
    };
    let admin = hs256_token(SECRET, &claims("ops", &json!({"scope": "seatclaim/admin"})));
    let created = app
        .request(Method::POST, "/v1/events")
        .header("Authorization", &format!("Bearer {admin}"))
        .json(&json!({"event_id": "e1", "name": "Show", "sections": [{"section": "A", "rows": 1, "seats_per_row": 5}]}))
        .send()
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let (status, config) = app.get("/ui/config.json").await;
    assert_eq!((status, &config["auth"]), (StatusCode::OK, &json!(true)));
    let token = hs256_token(SECRET, &claims("buyer-7", &json!({})));
    run(
        &app,
        "signed_in",
        &[
            ("SEATCLAIM_EVENT", "e1"),
            ("SEATCLAIM_TOKEN", &token),
            ("SEATCLAIM_SUBJECT", "buyer-7"),
        ],
    )
    .await;
}

/// The page's OpenID Connect client at the test issuer, and the buyer the issuer signs in.
const CLIENT_ID: &str = "seatclaim-web";
const OIDC_SUBJECT: &str = "oidc-buyer-1";

/// The real `seatclaim-api` on `app`'s backend with authentication on against `issuer` (its
/// JWKS, issuer and audience) and the page signing in there (`SEATCLAIM_UI_OIDC_CLIENT_ID`), as
/// a deployment configures it; `app`'s in-process worker decides its reservations. Returns the
/// process and its URL.
async fn api_signing_in_at(app: &TestApp, issuer: &TestIssuer) -> (ChildProcess, String) {
    let mut env = app.process_env();
    env.extend([
        ("SEATCLAIM_LISTEN", "127.0.0.1:0".to_owned()),
        ("SEATCLAIM_METRICS_LISTEN", "127.0.0.1:0".to_owned()),
        ("SEATCLAIM_EMBEDDED_WORKER", "false".to_owned()),
        ("SEATCLAIM_AUTH_JWKS_URL", issuer.jwks_url()),
        ("SEATCLAIM_AUTH_ISSUER", issuer.url.clone()),
        ("SEATCLAIM_AUTH_AUDIENCE", CLIENT_ID.to_owned()),
        ("SEATCLAIM_UI_OIDC_CLIENT_ID", CLIENT_ID.to_owned()),
        ("RUST_LOG", "info".to_owned()),
    ]);
    // On the blocking pool: the API fetches the issuer's JWKS, served by this test's runtime,
    // before it listens.
    tokio::task::spawn_blocking(move || {
        let api = ChildProcess::start("seatclaim-api", &env);
        let url = api.listening_url(Duration::from_secs(120));
        (api, url)
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn a_buyer_signs_in_with_openid_connect_and_reserves_with_the_issuers_token() {
    // Authentication off on the test's own app: it sets the event up and reads the job.
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    app.create_grid("e1", 1, 5, 300).await;
    let issuer = TestIssuer::start(CLIENT_ID, OIDC_SUBJECT).await;
    let (_api, url) = api_signing_in_at(&app, &issuer).await;
    // The page's one callback: its root.
    issuer.allow_redirect_uri(&format!("{url}/"));
    let (status, config) = get_json(&url, "/ui/config.json").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        config,
        json!({"auth": true, "oidc": {"issuer": issuer.url, "client_id": CLIENT_ID},
               "token_links": false})
    );

    let env = [
        ("SEATCLAIM_EVENT", "e1"),
        ("SEATCLAIM_SUBJECT", OIDC_SUBJECT),
    ];
    let printed = run_at(&url, "oidc_sign_in", &env).await;
    let printed = |name: &str| {
        printed
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .unwrap_or_else(|| panic!("the script prints {name}"))
            .to_owned()
    };
    assert_eq!(
        issuer.issued(),
        [printed("TOKEN=")],
        "the page holds the one token the issuer issued"
    );
    let job = app.job(&printed("JOB_ID=")).await;
    assert_eq!(
        (&job["status"], &job["buyer_id"]),
        (&json!("HELD"), &json!(OIDC_SUBJECT)),
        "{job}"
    );
}

/// `GET` on the API at `url`: status and JSON body.
async fn get_json(url: &str, path: &str) -> (StatusCode, Value) {
    let response = reqwest::get(format!("{url}{path}")).await.unwrap();
    let status = StatusCode::from_u16(response.status().as_u16()).unwrap();
    (status, response.json().await.unwrap())
}

/// The test issuer's own checks, without a browser: the token endpoint answers 400 to a wrong
/// PKCE verifier (so the browser test's sign-in proves the page's S256 challenge), to a code
/// used before, to another client or redirect URI and to a missing verifier; the authorization
/// endpoint never sends a browser to an unregistered redirect URI.
#[tokio::test]
async fn the_test_issuer_refuses_a_wrong_verifier_and_a_code_used_twice() {
    const CALLBACK: &str = "http://127.0.0.1:9/";
    let issuer = TestIssuer::start(CLIENT_ID, OIDC_SUBJECT).await;
    issuer.allow_redirect_uri(CALLBACK);
    let oidc = OidcClient::new(&issuer);
    let verifier = "the-verifier-of-this-test-with-more-than-43-characters";

    let code = oidc.code(CALLBACK, verifier).await;
    let wrong = oidc.exchange(
        &code,
        CALLBACK,
        CLIENT_ID,
        Some("another-verifier-entirely-0123456789-abcdefgh"),
    );
    assert_eq!(
        wrong.await,
        (400, json!("invalid_grant")),
        "a wrong verifier"
    );
    let spent = oidc.exchange(&code, CALLBACK, CLIENT_ID, Some(verifier));
    assert_eq!(
        spent.await,
        (400, json!("invalid_grant")),
        "the code is spent by any attempt"
    );
    for (redirect_uri, client_id, verifier, what) in [
        (
            "http://127.0.0.1:9/other",
            CLIENT_ID,
            Some(verifier),
            "another redirect URI",
        ),
        (CALLBACK, "another-client", Some(verifier), "another client"),
        (CALLBACK, CLIENT_ID, None, "no verifier"),
    ] {
        let code = oidc.code(CALLBACK, verifier.unwrap_or("v")).await;
        let (status, _) = oidc
            .exchange(&code, redirect_uri, client_id, verifier)
            .await;
        assert_eq!(status, 400, "{what}");
    }

    let code = oidc.code(CALLBACK, verifier).await;
    let (status, _) = oidc
        .exchange(&code, CALLBACK, CLIENT_ID, Some(verifier))
        .await;
    assert_eq!(status, 200, "the right verifier");
    assert_eq!(
        issuer.issued().len(),
        1,
        "one token, for the one good exchange"
    );
    let again = oidc.exchange(&code, CALLBACK, CLIENT_ID, Some(verifier));
    assert_eq!(
        again.await,
        (400, json!("invalid_grant")),
        "a code is used once"
    );

    let unregistered = oidc.authorize("http://127.0.0.1:9/elsewhere", "S256", verifier);
    assert_eq!(
        unregistered.await.status(),
        400,
        "no redirect to an unregistered URI"
    );
    let plain = oidc.authorize(CALLBACK, "plain", verifier).await;
    assert!(
        location(&plain).contains("error=invalid_request"),
        "only S256: {plain:?}"
    );
}

/// A client of the test issuer that follows no redirect, to read the codes it sends back.
struct OidcClient<'a> {
    issuer: &'a TestIssuer,
    http: reqwest::Client,
}

impl<'a> OidcClient<'a> {
    fn new(issuer: &'a TestIssuer) -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Self { issuer, http }
    }

    /// An authorization request of `CLIENT_ID` for `redirect_uri`, with the challenge of
    /// `verifier` by `method`.
    async fn authorize(
        &self,
        redirect_uri: &str,
        method: &str,
        verifier: &str,
    ) -> reqwest::Response {
        let challenge = s256_challenge(verifier);
        let query = [
            ("response_type", "code"),
            ("client_id", CLIENT_ID),
            ("redirect_uri", redirect_uri),
            ("state", "s1"),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", method),
        ];
        let url = format!("{}/authorize", self.issuer.url);
        self.http.get(url).query(&query).send().await.unwrap()
    }

    /// A code for `redirect_uri` whose challenge is `verifier`'s S256, with the state sent.
    async fn code(&self, redirect_uri: &str, verifier: &str) -> String {
        let reply = self.authorize(redirect_uri, "S256", verifier).await;
        let back = reqwest::Url::parse(location(&reply)).unwrap();
        let parameter = |name: &str| {
            back.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        assert_eq!(parameter("state").as_deref(), Some("s1"), "{back}");
        assert!(back.as_str().starts_with(redirect_uri), "{back}");
        parameter("code").unwrap_or_else(|| panic!("no code in {back}"))
    }

    /// The token request for `code`: its status and the `error` it answers (null on success).
    async fn exchange(
        &self,
        code: &str,
        redirect_uri: &str,
        client_id: &str,
        verifier: Option<&str>,
    ) -> (u16, Value) {
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("client_id", client_id),
        ];
        form.extend(verifier.map(|v| ("code_verifier", v)));
        let url = format!("{}/token", self.issuer.url);
        let reply = self.http.post(url).form(&form).send().await.unwrap();
        let status = reply.status().as_u16();
        let body: Value = reply.json().await.unwrap();
        (status, body["error"].clone())
    }
}

/// Where a redirect points.
fn location(reply: &reqwest::Response) -> &str {
    assert!(reply.status().is_redirection(), "{reply:?}");
    reply.headers()["location"].to_str().unwrap()
}

/// Off by default: `SEATCLAIM_SCREENSHOTS=1` writes the PNGs of docs/screenshots/.
#[tokio::test]
async fn screenshots_of_the_main_states() {
    if std::env::var("SEATCLAIM_SCREENSHOTS").as_deref() != Ok("1") {
        println!("skipped: set SEATCLAIM_SCREENSHOTS=1 to write docs/screenshots/");
        return;
    }
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    for (event_id, name, sections) in [
        (
            "night-show",
            "Night show",
            json!([{"section": "A", "rows": 4, "seats_per_row": 10}, {"section": "B", "rows": 2, "seats_per_row": 8}]),
        ),
        (
            "matinee",
            "Sunday matinee",
            json!([{"section": "A", "rows": 10, "seats_per_row": 20}]),
        ),
    ] {
        let created = app
            .create_event(&json!({"event_id": event_id, "name": name, "hold_seconds": 300, "sections": sections}))
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    }
    run(&app, "screenshots", &[("SEATCLAIM_EVENT", "night-show")]).await;
}
