//! Authentication and ownership over HTTP, with HS256 tokens (and RS256/ES256 against a JWKS the
//! test serves): every protected route needs a valid bearer token (401 with an RFC 6750
//! challenge otherwise), the buyer is the token's subject, a job is its buyer's alone (404 to
//! anyone else, readable by an admin), events need the admin scope, and each buyer's
//! reservation POSTs are rate-limited.
//!
//! Backends: embedded only (token validation does not touch the backend).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::sync::{Arc, Mutex};

use axum::http::{Method, StatusCode};
use seatclaim_e2e::tokens::{EC_A, RSA_A, RSA_B, claims, hs256_token, jwks, signed_token};
use seatclaim_e2e::{AppOptions, Reply, TestApp, assert_problem, hs256};
use serde_json::{Value, json};

const SECRET: &str = "auth-test-secret-of-at-least-32-bytes";

async fn app_with(auth: seatclaim_api::auth::AuthSettings) -> TestApp {
    TestApp::spawn_with(AppOptions {
        auth: Some(auth),
        ..AppOptions::default()
    })
    .await
}

fn token(sub: &str) -> String {
    hs256_token(SECRET, &claims(sub, &json!({})))
}

fn admin() -> String {
    hs256_token(
        SECRET,
        &claims("ops", &json!({"scope": "openid seatclaim/admin"})),
    )
}

async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Reply {
    let mut call = app.request(method, path).header("Idempotency-Key", "k1");
    if let Some(token) = token {
        call = call.header("Authorization", &format!("Bearer {token}"));
    }
    if let Some(body) = body {
        call = call.json(&body);
    }
    call.send().await
}

/// The status of reading, with `token`, a job nobody has: 404 once the token passes, 401 if not.
async fn reading_a_job_with(app: &TestApp, token: &str) -> StatusCode {
    let job = "/v1/jobs/00000000-0000-0000-0000-000000000000";
    call(app, Method::GET, job, Some(token), None).await.status
}

/// A 401 problem with a Bearer challenge, `error="invalid_token"` unless the token was missing.
fn assert_unauthenticated(reply: &Reply, missing: bool) {
    assert_problem(reply, StatusCode::UNAUTHORIZED);
    let challenge = reply.header("www-authenticate");
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert_eq!(challenge.contains("invalid_token"), !missing, "{challenge}");
}

async fn with_event(app: &TestApp) {
    let created = call(
        app,
        Method::POST,
        "/v1/events",
        Some(&admin()),
        Some(json!({"event_id": "e1", "name": "Show", "sections": [{"section": "A", "rows": 1, "seats_per_row": 20}]})),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
}

#[tokio::test]
async fn without_a_valid_token_the_protected_routes_are_401_and_the_public_ones_answer() {
    let app = app_with(hs256(SECRET)).await;
    with_event(&app).await;
    let reserve = json!({"seat_ids": ["A-1-1"]});
    let now = jiff::Timestamp::now().as_second();
    let bad_tokens = [
        ("Basic dXNlcjpwYXNz".to_owned(), "not a bearer token"),
        ("Bearer not.a.token".to_owned(), "malformed"),
        (
            format!(
                "Bearer {}",
                hs256_token(
                    "another-secret-of-at-least-32-bytes",
                    &claims("b1", &json!({}))
                )
            ),
            "bad signature",
        ),
        (
            format!(
                "Bearer {}",
                hs256_token(SECRET, &claims("b1", &json!({"exp": now - 120})))
            ),
            "expired",
        ),
        (
            format!(
                "Bearer {}",
                hs256_token(SECRET, &claims("b1", &json!({"nbf": now + 600})))
            ),
            "not yet valid",
        ),
        (
            format!(
                "Bearer {}",
                signed_token(RSA_A, "k1", &claims("b1", &json!({})))
            ),
            "RS256 with no JWKS",
        ),
        (
            "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJiMSIsImV4cCI6OTk5OTk5OTk5OX0.".to_owned(),
            "alg none",
        ),
    ];
    for (header, why) in &bad_tokens {
        let reply = app
            .request(Method::POST, "/v1/events/e1/reservations")
            .header("Idempotency-Key", "k1")
            .header("Authorization", header)
            .json(&reserve)
            .send()
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNAUTHORIZED,
            "{why}: {}",
            reply.text()
        );
        assert_unauthenticated(&reply, false);
    }
    let job = "/v1/jobs/00000000-0000-0000-0000-000000000000".to_owned();
    for (method, path) in [
        (Method::POST, "/v1/events/e1/reservations".to_owned()),
        (Method::GET, job.clone()),
        (Method::POST, format!("{job}/confirm")),
        (Method::POST, format!("{job}/cancel")),
        (Method::POST, "/v1/events".to_owned()),
    ] {
        let reply = call(&app, method, &path, None, Some(reserve.clone())).await;
        assert_unauthenticated(&reply, true);
    }
    for path in ["/v1/events/e1/seats", "/healthz", "/readyz"] {
        let reply = call(&app, Method::GET, path, None, None).await;
        assert_eq!(reply.status, StatusCode::OK, "{path} stays public");
    }
}

#[tokio::test]
async fn buyers_reserve_as_their_subject_and_see_only_their_own_jobs() {
    let app = app_with(hs256(SECRET)).await;
    with_event(&app).await;
    let (b1, b2) = (token("b1"), token("b2"));
    let reply = call(
        &app,
        Method::POST,
        "/v1/events/e1/reservations",
        Some(&b1),
        Some(json!({"seat_ids": ["A-1-1"]})),
    )
    .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text());
    let job = reply.json()["job_id"].as_str().unwrap().to_owned();
    let path = format!("/v1/jobs/{job}");

    let mine = call(&app, Method::GET, &path, Some(&b1), None).await;
    assert_eq!(mine.status, StatusCode::OK);
    assert_eq!(
        mine.json()["buyer_id"],
        "b1",
        "the buyer is the token's subject"
    );
    let forged = call(
        &app,
        Method::POST,
        "/v1/events/e1/reservations",
        Some(&b1),
        Some(json!({"buyer_id": "b2", "seat_ids": ["A-1-2"]})),
    )
    .await;
    assert_problem(&forged, StatusCode::FORBIDDEN);
    let same = call(
        &app,
        Method::POST,
        "/v1/events/e1/reservations",
        Some(&b1),
        Some(json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]})),
    )
    .await;
    assert_eq!(
        same.json()["job_id"],
        job.as_str(),
        "a matching buyer_id is the same request"
    );

    for (method, route) in [
        (Method::GET, path.clone()),
        (Method::POST, format!("{path}/confirm")),
        (Method::POST, format!("{path}/cancel")),
    ] {
        let theirs = call(&app, method, &route, Some(&b2), None).await;
        assert_problem(&theirs, StatusCode::NOT_FOUND);
    }
    let read = call(&app, Method::GET, &path, Some(&admin()), None).await;
    assert_eq!(read.status, StatusCode::OK, "an admin reads any job");
    let settle = call(
        &app,
        Method::POST,
        &format!("{path}/cancel"),
        Some(&admin()),
        None,
    )
    .await;
    assert_problem(&settle, StatusCode::NOT_FOUND);

    // Keys are scoped to the subject: b2's k1 is another job.
    let other = call(
        &app,
        Method::POST,
        "/v1/events/e1/reservations",
        Some(&b2),
        Some(json!({"seat_ids": ["A-1-1"]})),
    )
    .await;
    assert_eq!(other.status, StatusCode::ACCEPTED);
    assert_ne!(other.json()["job_id"], job.as_str());
    let decided = seatclaim_e2e::eventually(
        std::time::Duration::from_secs(30),
        "b1's job is decided",
        || async {
            let reply = call(
                &app,
                Method::GET,
                &format!("{path}?wait=5"),
                Some(&b1),
                None,
            )
            .await;
            (reply.json()["status"] != "PENDING").then(|| reply.json())
        },
    )
    .await;
    assert_eq!(decided["status"], "HELD");
    let cancelled = call(
        &app,
        Method::POST,
        &format!("{path}/cancel"),
        Some(&b1),
        None,
    )
    .await;
    assert_eq!(cancelled.json()["status"], "CANCELLED");
}

#[tokio::test]
async fn creating_an_event_needs_the_admin_scope() {
    let app = app_with(hs256(SECRET)).await;
    let body = json!({"event_id": "e2", "name": "Show", "sections": [{"section": "A", "rows": 1, "seats_per_row": 2}]});
    let refused = call(
        &app,
        Method::POST,
        "/v1/events",
        Some(&token("b1")),
        Some(body.clone()),
    )
    .await;
    assert_problem(&refused, StatusCode::FORBIDDEN);
    assert!(
        refused
            .header("www-authenticate")
            .contains("insufficient_scope")
    );
    let created = call(&app, Method::POST, "/v1/events", Some(&admin()), Some(body)).await;
    assert_eq!(created.status, StatusCode::CREATED);
    // The operator's summary is the admin's too.
    let summary = "/v1/events/e2/summary";
    let refused = call(&app, Method::GET, summary, Some(&token("b1")), None).await;
    assert_problem(&refused, StatusCode::FORBIDDEN);
    let read = call(&app, Method::GET, summary, Some(&admin()), None).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text());
}

#[tokio::test]
async fn where_operators_create_events_the_api_refuses_them_and_seatclaimctl_creates_them_and_closes_waitlists()
 {
    let app = TestApp::spawn_with(AppOptions {
        auth: Some(hs256(SECRET)),
        creates_events: false,
        ..AppOptions::default()
    })
    .await;
    let body = json!({"event_id": "e3", "name": "Show", "sections": [{"section": "A", "rows": 1, "seats_per_row": 2}]});
    let refused = call(
        &app,
        Method::POST,
        "/v1/events",
        Some(&admin()),
        Some(body.clone()),
    )
    .await;
    let problem = assert_problem(&refused, StatusCode::FORBIDDEN);
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("seatclaimctl events create"), "{detail}");
    let (status, _) = app.get("/v1/events/e3/seats").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing was created");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("e3.json");
    std::fs::write(&file, body.to_string()).unwrap();
    let file = file.display().to_string();
    let (code, stdout) = app.ctl(&["events", "create", "--file", &file, "--json"]);
    assert_eq!(code, 0, "{stdout}");
    let created: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(created, json!({"event_id": "e3", "seats": 2}));
    let (status, map) = app.get("/v1/events/e3/seats").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(map["seats"].as_array().map(Vec::len), Some(2));
    let (again, _) = app.ctl(&["events", "create", "--file", &file]);
    assert_eq!(again, 1, "the event exists already");

    // Closing a waitlist changes the event too: seatclaimctl's, not the API's.
    let close = "/v1/events/e3/waitlist/close";
    let refused = call(&app, Method::POST, close, Some(&admin()), None).await;
    let problem = assert_problem(&refused, StatusCode::FORBIDDEN);
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("seatclaimctl events close-waitlist"),
        "{detail}"
    );
}

#[tokio::test]
async fn issuer_and_audience_are_enforced_when_configured() {
    let mut settings = hs256(SECRET);
    settings.issuer = Some("https://issuer.example".into());
    // Two audiences, as a stack's Cognito pool passes its buyer and operator clients.
    settings.audience = Some("web,operators".into());
    let app = app_with(settings).await;
    let good = json!({"iss": "https://issuer.example", "aud": "web"});
    let cognito = json!({"iss": "https://issuer.example", "client_id": "web"});
    let operator = json!({"iss": "https://issuer.example", "client_id": "operators"});
    for (extra, status) in [
        (good, StatusCode::OK),
        (cognito, StatusCode::OK),
        (operator, StatusCode::OK),
        (
            json!({"iss": "https://other.example", "aud": "web"}),
            StatusCode::UNAUTHORIZED,
        ),
        (
            json!({"iss": "https://issuer.example", "aud": "mobile"}),
            StatusCode::UNAUTHORIZED,
        ),
        (json!({"aud": "web"}), StatusCode::UNAUTHORIZED),
    ] {
        let token = hs256_token(SECRET, &claims("b1", &extra));
        let seen = match reading_a_job_with(&app, &token).await {
            StatusCode::NOT_FOUND => StatusCode::OK,
            other => other,
        };
        assert_eq!(seen, status, "{extra}");
    }
}

/// Serves `document` (swappable) as a JWKS on a free port; returns its URL.
async fn serve_jwks(document: Arc<Mutex<Value>>) -> String {
    let app = axum::Router::new().route(
        "/jwks.json",
        axum::routing::get(move || {
            let document = document.lock().unwrap().clone();
            async move { axum::Json(document) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// The issuer and the audience every JWKS test's tokens name, as a JWKS requires.
const ISSUER: &str = "https://issuer.example";
const AUDIENCE: &str = "web";

/// Authentication against the JWKS at `url` alone, with its issuer and audience.
fn jwks_settings(url: String) -> seatclaim_api::auth::AuthSettings {
    let mut settings = hs256(SECRET);
    settings.hs256_secret = None;
    settings.jwks_url = Some(url);
    settings.issuer = Some(ISSUER.into());
    settings.audience = Some(AUDIENCE.into());
    settings
}

/// Claims for `sub` from the JWKS tests' issuer, for their audience.
fn issued(sub: &str) -> Value {
    claims(sub, &json!({"iss": ISSUER, "aud": AUDIENCE}))
}

#[tokio::test]
async fn jwks_tokens_are_checked_against_the_issuers_keys_and_a_rotated_key_is_taken_up() {
    let document = Arc::new(Mutex::new(jwks(&[(RSA_A, "k1"), (EC_A, "e1")])));
    let app = app_with(jwks_settings(serve_jwks(document.clone()).await)).await;
    let status = |token: String| {
        let app = &app;
        async move { reading_a_job_with(app, &token).await }
    };
    let mine = issued("b1");
    assert_eq!(
        status(signed_token(RSA_A, "k1", &mine)).await,
        StatusCode::NOT_FOUND,
        "RS256 accepted"
    );
    assert_eq!(
        status(signed_token(EC_A, "e1", &mine)).await,
        StatusCode::NOT_FOUND,
        "ES256 accepted"
    );
    assert_eq!(
        status(signed_token(RSA_B, "k1", &mine)).await,
        StatusCode::UNAUTHORIZED,
        "another key under the same kid"
    );
    assert_eq!(
        status(hs256_token(SECRET, &mine)).await,
        StatusCode::UNAUTHORIZED,
        "HS256 with only a JWKS"
    );
    assert_eq!(
        status(signed_token(RSA_B, "k2", &mine)).await,
        StatusCode::UNAUTHORIZED,
        "not published yet"
    );
    // The issuer rotates k2 in; a token naming it makes the API fetch the JWKS again (once the
    // pause after the last fetch has passed).
    *document.lock().unwrap() = jwks(&[(RSA_A, "k1"), (RSA_B, "k2")]);
    let accepted = seatclaim_e2e::eventually(
        std::time::Duration::from_secs(30),
        "the rotated key is accepted",
        || async {
            (status(signed_token(RSA_B, "k2", &mine)).await == StatusCode::NOT_FOUND).then_some(())
        },
    );
    accepted.await;
}

#[tokio::test]
async fn a_buyer_past_its_burst_gets_429_and_other_buyers_do_not() {
    let app = app_with(hs256(SECRET)).await;
    with_event(&app).await;
    let (b1, b2) = (token("b1"), token("b2"));
    let post = |token: &str, n: usize| {
        app.request(Method::POST, "/v1/events/e1/reservations")
            .header("Idempotency-Key", &format!("k{n}"))
            .header("Authorization", &format!("Bearer {token}"))
            .json(&json!({"seat_ids": [format!("A-1-{}", n % 20 + 1)]}))
            .send()
    };
    // The burst of 10 goes through at once; the bucket refills at 5 a second, so the first
    // refusal comes after at least 10 and (at this loop's pace) well before 20.
    let started = std::time::Instant::now();
    let mut accepted = 0;
    let limited = loop {
        let reply = post(&b1, accepted).await;
        if reply.status != StatusCode::ACCEPTED {
            break reply;
        }
        accepted += 1;
        assert!(accepted < 40, "never limited");
    };
    let refills = (started.elapsed().as_secs_f64() * 5.0).ceil() as usize;
    assert!(
        (10..=10 + refills).contains(&accepted),
        "{accepted} accepted"
    );
    assert_problem(&limited, StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = limited.header("retry-after").parse().unwrap();
    assert!((1..=2).contains(&wait), "Retry-After {wait}");
    assert_eq!(
        post(&b2, 0).await.status,
        StatusCode::ACCEPTED,
        "another buyer is not limited"
    );
    eprintln!(
        "rate: {accepted} accepted before the first 429 (Retry-After {wait}); another buyer accepted"
    );
}

/// A key the issuer publishes right after the API started is taken up by the first token that
/// names it: the start-up fetch does not count toward the pause between on-demand fetches.
#[tokio::test]
async fn a_key_published_right_after_start_is_taken_up_at_once() {
    let document = Arc::new(Mutex::new(jwks(&[(RSA_A, "k1")])));
    let app = app_with(jwks_settings(serve_jwks(document.clone()).await)).await;
    // Beside an issuer's keys the page takes no token from a `#token=` link.
    let (_, config) = app.get("/ui/config.json").await;
    assert_eq!(config["token_links"], false, "{config}");
    *document.lock().unwrap() = jwks(&[(RSA_A, "k1"), (RSA_B, "k2")]);
    let token = signed_token(RSA_B, "k2", &issued("b1"));
    assert_eq!(
        reading_a_job_with(&app, &token).await,
        StatusCode::NOT_FOUND
    );
}

/// With `SEATCLAIM_AUTH_TOKEN_USE=access`, Cognito's ID tokens (and tokens that do not say) are
/// refused; access tokens pass.
#[tokio::test]
async fn a_required_token_use_refuses_every_other_kind_of_token() {
    let mut settings = hs256(SECRET);
    settings.token_use = Some("access".into());
    let app = app_with(settings).await;
    // With development keys alone, the page may take a token from a `#token=` link.
    let (_, config) = app.get("/ui/config.json").await;
    assert_eq!(config["token_links"], true, "{config}");
    for (extra, status) in [
        (json!({"token_use": "access"}), StatusCode::NOT_FOUND),
        (json!({"token_use": "id"}), StatusCode::UNAUTHORIZED),
        (json!({}), StatusCode::UNAUTHORIZED),
    ] {
        let token = hs256_token(SECRET, &claims("b1", &extra));
        assert_eq!(reading_a_job_with(&app, &token).await, status, "{extra}");
    }
}

/// The API binary refuses to start open beyond the loopback interface, with an issuer and no
/// audience, with an HS256 secret shorter than 32 bytes (or empty), or with a JWKS and no issuer
/// and audience, saying why; `SEATCLAIM_AUTH=off` runs it open on purpose.
#[test]
fn the_api_refuses_to_start_open_to_the_network_or_with_keys_anyone_could_pass() {
    let data = tempfile::tempdir().unwrap();
    // A refusal exits at once; one that started instead is caught by the deadline, not waited on.
    let start = |extra: &[(&str, &str)]| {
        let mut env = vec![
            ("SEATCLAIM_DATA_DIR", data.path().display().to_string()),
            ("SEATCLAIM_LISTEN", "0.0.0.0:0".to_owned()),
            ("SEATCLAIM_METRICS_LISTEN", "127.0.0.1:0".to_owned()),
            ("SEATCLAIM_EMBEDDED_WORKER", "false".to_owned()),
        ];
        env.extend(
            extra
                .iter()
                .map(|(name, value)| (*name, (*value).to_owned())),
        );
        seatclaim_e2e::ChildProcess::start("seatclaim-api", &env)
            .exit_within(std::time::Duration::from_secs(60))
    };
    for (extra, why) in [
        (
            &[][..],
            "beyond the loopback interface without authentication",
        ),
        (
            &[
                ("SEATCLAIM_AUTH_HS256_SECRET", SECRET),
                ("SEATCLAIM_AUTH_ISSUER", "https://issuer.example"),
            ][..],
            "SEATCLAIM_AUTH_ISSUER needs SEATCLAIM_AUTH_AUDIENCE",
        ),
        (
            &[("SEATCLAIM_AUTH_HS256_SECRET", "twenty-bytes-secret!")][..],
            "is 20 bytes long; an HS256 secret must be at least 32 bytes",
        ),
        (
            &[("SEATCLAIM_AUTH_HS256_SECRET", "")][..],
            "is 0 bytes long; an HS256 secret must be at least 32 bytes",
        ),
        (
            &[("SEATCLAIM_AUTH_JWKS_URL", "https://127.0.0.1:9/jwks.json")][..],
            "SEATCLAIM_AUTH_JWKS_URL needs SEATCLAIM_AUTH_ISSUER and SEATCLAIM_AUTH_AUDIENCE",
        ),
        (
            &[("SEATCLAIM_AUTH_JWKS_URL", "")][..],
            "SEATCLAIM_AUTH_JWKS_URL is set but empty",
        ),
    ] {
        let (status, said) = start(extra);
        assert!(!status.success(), "{extra:?} started");
        assert!(said.contains(why), "{extra:?}: {said}");
    }
    let open = seatclaim_e2e::ChildProcess::start(
        "seatclaim-api",
        &[
            ("SEATCLAIM_DATA_DIR", data.path().display().to_string()),
            ("SEATCLAIM_LISTEN", "0.0.0.0:0".to_owned()),
            ("SEATCLAIM_METRICS_LISTEN", "127.0.0.1:0".to_owned()),
            ("SEATCLAIM_EMBEDDED_WORKER", "false".to_owned()),
            ("SEATCLAIM_AUTH", "off".to_owned()),
        ],
    );
    open.wait_for_log("listening", std::time::Duration::from_secs(60));
}

/// A partner service whose token's scope holds `seatclaim/channel:<name>` reserves under that
/// channel without a code; its buyers' tokens without the scope are public.
#[tokio::test]
async fn a_partners_channel_scope_admits_to_its_channel_without_a_code() {
    let app = app_with(hs256(SECRET)).await;
    let event = json!({"event_id": "partnered", "name": "Partnered",
        "channels": [{"name": "partner"}],
        "sections": [{"section": "P", "rows": 1, "seats_per_row": 4, "channel": "partner"}]});
    let created = call(
        &app,
        Method::POST,
        "/v1/events",
        Some(&admin()),
        Some(event),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let partner = hs256_token(
        SECRET,
        &claims(
            "partner-app",
            &json!({"scope": "seatclaim/channel:partner"}),
        ),
    );
    let path = "/v1/events/partnered/reservations";
    let body = json!({"section": "P", "quantity": 1});
    for (who, token, status) in [
        ("public", token("fan"), "REJECTED"),
        ("partner", partner, "HELD"),
    ] {
        let reserved = call(&app, Method::POST, path, Some(&token), Some(body.clone())).await;
        assert_eq!(reserved.status, StatusCode::ACCEPTED, "{}", reserved.text());
        let job_id = reserved.json()["job_id"].as_str().unwrap().to_owned();
        let job =
            seatclaim_e2e::eventually(std::time::Duration::from_secs(30), "a decision", || {
                let (app, token, job_id) = (&app, &token, &job_id);
                async move {
                    let path = format!("/v1/jobs/{job_id}");
                    let reply = call(app, Method::GET, &path, Some(token), None).await;
                    let job = reply.json();
                    (job["status"] != "PENDING").then_some(job)
                }
            })
            .await;
        assert_eq!(job["status"], status, "{who}: {job}");
    }
}
