//! Hold extension over HTTP: the buyer of a live hold moves its deadline later by the event's
//! `hold_extension_seconds`, from the deadline, as often as `max_hold_extensions` allows; every
//! other case is a 409 (or a 404 for a job that is not the caller's, admins included).

use axum::http::{Method, StatusCode};
use jiff::{SignedDuration, Timestamp};
use seatclaim_core::ports::Clock;
use seatclaim_e2e::tokens::{claims, hs256_token};
use seatclaim_e2e::{AppOptions, TestApp, assert_problem, eventually, hs256};
use serde_json::{Value, json};

use super::{DECIDED_WITHIN, seats};

const SECRET: &str = "extend-test-secret-of-at-least-32-bytes";

/// Creates event `ext`: ten seats, 300 s holds, extensions of 120 s, at most `max`.
async fn extendable(app: &TestApp, token: Option<&str>, max: u32) {
    let mut create = app.request(Method::POST, "/v1/events").json(&json!({
        "event_id": "ext", "name": "Extendable", "hold_seconds": 300,
        "hold_extension_seconds": 120, "max_hold_extensions": max,
        "sections": [{"section": "A", "rows": 1, "seats_per_row": 10}],
    }));
    if let Some(token) = token {
        create = create.header("authorization", &format!("Bearer {token}"));
    }
    let created = create.send().await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
}

/// Holds `seat` of `event` and returns the HELD job.
async fn held(app: &TestApp, event: &str, key: &str, seat: &str) -> Value {
    let job_id = app.reserve_ok(event, key, &seats(&[seat])).await;
    let job = app.decided(&job_id, DECIDED_WITHIN).await;
    assert_eq!(job["status"], "HELD", "{job}");
    job
}

fn deadline(job: &Value) -> Timestamp {
    let Some(Ok(at)) = job["hold_expires_at"].as_str().map(str::parse) else {
        panic!("a HELD job has a deadline: {job}");
    };
    at
}

#[tokio::test]
async fn a_buyer_extends_a_live_hold_from_its_deadline_until_the_extensions_are_used_up() {
    let app = TestApp::spawn().await;
    extendable(&app, None, 2).await;
    let (status, list) = app.get("/v1/events").await;
    assert_eq!(status, StatusCode::OK);
    let listed = &list["events"][0];
    assert_eq!(
        (
            &listed["hold_extension_seconds"],
            &listed["max_hold_extensions"]
        ),
        (&json!(120), &json!(2)),
        "{listed}"
    );

    let job = held(&app, "ext", "x1", "A-1-1").await;
    let (id, first) = (job["job_id"].as_str().unwrap(), deadline(&job));
    assert_eq!(job["hold_extensions"], 0);
    let extend = format!("/v1/jobs/{id}/extend");
    for n in 1..=2 {
        let (status, extended) = app.post(&extend).await;
        assert_eq!(status, StatusCode::OK, "{extended}");
        assert_eq!(extended["status"], "HELD");
        assert_eq!(extended["hold_extensions"], n);
        let step = SignedDuration::from_secs(120 * i64::from(n));
        assert_eq!(
            deadline(&extended),
            first + step,
            "from the deadline, not from now"
        );
        assert_eq!(
            app.job(id).await["hold_expires_at"],
            extended["hold_expires_at"]
        );
    }
    let used_up = app.post_problem(&extend, StatusCode::CONFLICT).await;
    assert!(
        used_up["detail"]
            .as_str()
            .unwrap()
            .contains("extended 2 times"),
        "{used_up}"
    );

    // Past the extended deadline the hold is gone: an extension does not revive it.
    let lapsed_at = first + SignedDuration::from_secs(240);
    app.clock
        .advance(lapsed_at.duration_since(app.clock.now()) + SignedDuration::from_secs(1));
    app.post_problem(&extend, StatusCode::CONFLICT).await;
    assert_eq!(app.job(id).await["status"], "EXPIRED");
}

#[tokio::test]
async fn an_extension_the_event_or_the_job_does_not_allow_is_a_conflict() {
    let app = TestApp::spawn().await;
    app.create_grid("e1", 1, 10, 300).await;
    let fixed = held(&app, "e1", "f1", "A-1-1").await;
    let refused = app
        .post_problem(
            &format!("/v1/jobs/{}/extend", fixed["job_id"].as_str().unwrap()),
            StatusCode::CONFLICT,
        )
        .await;
    assert!(
        refused["detail"]
            .as_str()
            .unwrap()
            .contains("cannot be extended"),
        "{refused}"
    );

    extendable(&app, None, 1).await;
    let cancelled = held(&app, "ext", "c1", "A-1-2").await;
    let id = cancelled["job_id"].as_str().unwrap();
    assert_eq!(
        app.post(&format!("/v1/jobs/{id}/cancel")).await.0,
        StatusCode::OK
    );
    app.post_problem(&format!("/v1/jobs/{id}/extend"), StatusCode::CONFLICT)
        .await;
    app.post_problem(
        "/v1/jobs/00000000-0000-4000-8000-000000000000/extend",
        StatusCode::NOT_FOUND,
    )
    .await;
}

#[tokio::test]
async fn extension_terms_are_checked_when_the_event_is_created() {
    let app = TestApp::spawn().await;
    for (terms, field) in [
        (
            json!({"hold_extension_seconds": 86_401}),
            "hold_extension_seconds",
        ),
        (
            json!({"hold_extension_seconds": 60, "max_hold_extensions": 11}),
            "max_hold_extensions",
        ),
    ] {
        let mut body = json!({
            "event_id": "bad", "name": "Bad",
            "sections": [{"section": "A", "rows": 1, "seats_per_row": 1}],
        });
        body.as_object_mut()
            .unwrap()
            .extend(terms.as_object().unwrap().clone());
        let problem = assert_problem(
            &app.create_event(&body).await,
            StatusCode::UNPROCESSABLE_ENTITY,
        );
        assert!(
            problem["detail"].as_str().unwrap().contains(field),
            "{problem}"
        );
    }
}

#[tokio::test]
async fn only_the_jobs_own_buyer_extends_it() {
    let app = TestApp::spawn_with(AppOptions {
        auth: Some(hs256(SECRET)),
        ..AppOptions::default()
    })
    .await;
    let token =
        |sub: &str, scope: &str| hs256_token(SECRET, &claims(sub, &json!({"scope": scope})));
    let (admin, owner, other) = (
        token("admin", "seatclaim/admin"),
        token("owner", ""),
        token("other", ""),
    );
    extendable(&app, Some(&admin), 1).await;
    let reserved = app
        .request(Method::POST, "/v1/events/ext/reservations")
        .header("authorization", &format!("Bearer {owner}"))
        .header("idempotency-key", "own-1")
        .json(&json!({"seat_ids": ["A-1-1"]}))
        .send()
        .await;
    let id = reserved.json()["job_id"].as_str().unwrap().to_owned();
    eventually(DECIDED_WITHIN, "the owner's hold", || async {
        let job = app
            .request(Method::GET, &format!("/v1/jobs/{id}"))
            .header("authorization", &format!("Bearer {owner}"))
            .send()
            .await
            .json();
        (job["status"] == "HELD").then_some(())
    })
    .await;
    let extend = |token: String| {
        let path = format!("/v1/jobs/{id}/extend");
        let app = &app;
        async move {
            app.request(Method::POST, &path)
                .header("authorization", &format!("Bearer {token}"))
                .send()
                .await
        }
    };
    assert_problem(&extend(other).await, StatusCode::NOT_FOUND);
    assert_problem(&extend(admin).await, StatusCode::NOT_FOUND);
    let own = extend(owner).await;
    assert_eq!(own.status, StatusCode::OK, "{}", own.text());
    assert_eq!(own.json()["hold_extensions"], 1);
}
