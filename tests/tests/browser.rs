//! The buyer page (`api/ui/`) in a real browser: each scenario is a node script in
//! `tests/browser/` that drives Debian's Chromium through playwright-core against an app served
//! on a socket: the whole flow to SOLD, a rejection, a cancel, an expiry, a reload while PENDING
//! (one reservation, however often the page is reloaded or clicked), keyboard-only use, and a
//! bearer token with authentication on. With `SEATCLAIM_SCREENSHOTS=1` it also refreshes the
//! pictures in `docs/screenshots/`. `bash tests/browser/install.sh` installs what it needs
//! (`tests/run.sh` runs it); without Chromium or the node modules the suite fails and says so.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use axum::http::{Method, StatusCode};
use seatclaim_e2e::tokens::{claims, hs256_token};
use seatclaim_e2e::{AppOptions, TestApp, hs256};
use seatclaim_worker::{Worker, WorkerSettings};
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
    let url = format!("http://{}", app.address().unwrap());
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
async fn a_released_hold_puts_its_seat_back_on_sale() {
    let Some(app) = app_with(AppOptions::default()).await else {
        return;
    };
    app.create_grid("e1", 2, 5, 300).await;
    run(&app, "cancel", &[("SEATCLAIM_EVENT", "e1")]).await;
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
