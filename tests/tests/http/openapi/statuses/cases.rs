//! The table of probes, one resource at a time: each drives an operation into one of its
//! statuses (the success, and every error its handler and extractors can answer).

use std::time::Duration;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::Expect;

const EVENTS: &str = "/v1/events";
const RESERVE: &str = "/v1/events/{event_id}/reservations";
const SEATS: &str = "/v1/events/{event_id}/seats";
const JOB: &str = "/v1/jobs/{job_id}";
const CONFIRM: &str = "/v1/jobs/{job_id}/confirm";
const CANCEL: &str = "/v1/jobs/{job_id}/cancel";
const EXTEND: &str = "/v1/jobs/{job_id}/extend";
const CLOSE_WAITLIST: &str = "/v1/events/{event_id}/waitlist/close";
const UNKNOWN_JOB: &str = "00000000-0000-0000-0000-000000000000";

/// `POST /v1/events`: created, exists, not JSON, not declared JSON, wrong shape, broken rule,
/// too large; and closing an event's waitlist: closed, unknown, malformed.
pub async fn events(x: &Expect<'_>) {
    let event = json!({"event_id": "e1", "name": "Show", "sections": [{"section": "A", "rows": 1, "seats_per_row": 10}]});
    let post = || x.to(Method::POST, EVENTS, EVENTS);
    post().json(&event).answers(StatusCode::CREATED).await;
    post().json(&event).answers(StatusCode::CONFLICT).await;
    post()
        .header("Content-Type", "application/json")
        .body("{")
        .answers(StatusCode::BAD_REQUEST)
        .await;
    post()
        .body(event.to_string())
        .answers(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        .await;
    post()
        .json(&json!([1]))
        .answers(StatusCode::UNPROCESSABLE_ENTITY)
        .await;
    post()
        .json(&json!({"event_id": "e2", "name": "Empty", "sections": []}))
        .answers(StatusCode::UNPROCESSABLE_ENTITY)
        .await;
    for (path, status) in [
        ("/v1/events/e1/waitlist/close", StatusCode::OK),
        ("/v1/events/nope/waitlist/close", StatusCode::NOT_FOUND),
        ("/v1/events/%FF/waitlist/close", StatusCode::BAD_REQUEST),
    ] {
        x.to(Method::POST, CLOSE_WAITLIST, path)
            .answers(status)
            .await;
    }
    let huge = json!({"event_id": "e3", "name": "x".repeat(32 * 1024 * 1024), "seats": []});
    post()
        .json(&huge)
        .answers(StatusCode::PAYLOAD_TOO_LARGE)
        .await;
}

/// A reservation body for buyer b1.
fn seats(ids: &[&str]) -> Value {
    json!({"buyer_id": "b1", "seat_ids": ids})
}

/// `POST /v1/events/{event_id}/reservations`: accepted, and each way it is refused.
pub async fn reservations(x: &Expect<'_>) {
    let reserve = |path: &str| {
        x.to(Method::POST, RESERVE, path)
            .header("Idempotency-Key", "k1")
    };
    let e1 = "/v1/events/e1/reservations";
    reserve(e1)
        .json(&seats(&["A-1-1"]))
        .answers(StatusCode::ACCEPTED)
        .await;
    // The same request again, asking to wait: the job is decided within it.
    reserve(e1)
        .header("Prefer", "wait=10")
        .json(&seats(&["A-1-1"]))
        .answers(StatusCode::OK)
        .await;
    x.to(Method::POST, RESERVE, e1)
        .json(&seats(&["A-1-1"]))
        .answers(StatusCode::BAD_REQUEST)
        .await;
    reserve(e1)
        .header("Content-Type", "application/json")
        .body("{")
        .answers(StatusCode::BAD_REQUEST)
        .await;
    reserve("/v1/events/%FF/reservations")
        .json(&seats(&["A-1-1"]))
        .answers(StatusCode::BAD_REQUEST)
        .await;
    x.to(Method::POST, RESERVE, "/v1/events/nope/reservations")
        .header("Idempotency-Key", "k-nope")
        .json(&seats(&["A-1-1"]))
        .answers(StatusCode::NOT_FOUND)
        .await;
    let large = json!({"buyer_id": "x".repeat(65 * 1024), "seat_ids": ["A-1-1"]});
    reserve(e1)
        .json(&large)
        .answers(StatusCode::PAYLOAD_TOO_LARGE)
        .await;
    reserve(e1)
        .body(seats(&["A-1-1"]).to_string())
        .answers(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        .await;
    for refused in [
        json!({"seat_ids": ["A-1-1"]}),
        json!({"buyer_id": 7, "seat_ids": ["A-1-1"]}),
        seats(&["A-1-2"]),
    ] {
        reserve(e1)
            .json(&refused)
            .answers(StatusCode::UNPROCESSABLE_ENTITY)
            .await;
    }
    rate_limited(x).await;
}

/// The buyer's bucket runs dry: 429 (the requests before it are 422s: no seats are asked for).
async fn rate_limited(x: &Expect<'_>) {
    for n in 0..100 {
        let (reply, check) = x
            .to(Method::POST, RESERVE, "/v1/events/e1/reservations")
            .header("Idempotency-Key", &format!("rl-{n}"))
            .json(&json!({"buyer_id": "rl"}))
            .send()
            .await;
        check.documents(&reply);
        if reply.status == StatusCode::TOO_MANY_REQUESTS {
            assert!(reply.header("retry-after").parse::<u64>().is_ok());
            return;
        }
    }
    panic!("100 reservations in a row never ran the buyer's bucket dry");
}

/// A job of b1 for `seat`, once it is HELD.
async fn held(x: &Expect<'_>, key: &str, seat: &str) -> String {
    held_in(x, "e1", key, seat).await
}

async fn held_in(x: &Expect<'_>, event: &str, key: &str, seat: &str) -> String {
    let job = x.app.reserve_ok(event, key, &seats(&[seat])).await;
    let decided = x.app.decided(&job, Duration::from_secs(30)).await;
    assert_eq!(decided["status"], "HELD", "{decided}");
    job
}

/// `GET /v1/jobs/{job_id}`, confirm, cancel and extend: found, malformed, unknown, conflicting.
pub async fn jobs(x: &Expect<'_>) {
    let sold = held(x, "k-sold", "A-1-5").await;
    let path = format!("/v1/jobs/{sold}");
    x.to(Method::GET, JOB, &path).answers(StatusCode::OK).await;
    for bad in [format!("{path}?wait=soon"), "/v1/jobs/%FF".to_owned()] {
        x.to(Method::GET, JOB, &bad)
            .answers(StatusCode::BAD_REQUEST)
            .await;
    }
    x.to(Method::GET, JOB, &format!("/v1/jobs/{UNKNOWN_JOB}"))
        .answers(StatusCode::NOT_FOUND)
        .await;
    let cancelled = held(x, "k-cancelled", "A-1-6").await;
    let at = |job: &str, action: &str| format!("/v1/jobs/{job}/{action}");
    x.to(Method::POST, CONFIRM, &at(&sold, "confirm"))
        .answers(StatusCode::OK)
        .await;
    x.to(Method::POST, CANCEL, &at(&cancelled, "cancel"))
        .answers(StatusCode::OK)
        .await;
    x.to(Method::POST, CONFIRM, &at(&cancelled, "confirm"))
        .answers(StatusCode::CONFLICT)
        .await;
    x.to(Method::POST, CANCEL, &at(&sold, "cancel"))
        .answers(StatusCode::CONFLICT)
        .await;
    let created = x
        .app
        .create_event(&json!({
            "event_id": "ext", "name": "Extendable", "hold_extension_seconds": 60,
            "sections": [{"section": "A", "rows": 1, "seats_per_row": 2}],
        }))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let extendable = held_in(x, "ext", "k-extended", "A-1-1").await;
    x.to(Method::POST, EXTEND, &at(&extendable, "extend"))
        .answers(StatusCode::OK)
        .await;
    x.to(Method::POST, EXTEND, &at(&extendable, "extend"))
        .answers(StatusCode::CONFLICT)
        .await;
    let actions = [(CONFIRM, "confirm"), (CANCEL, "cancel"), (EXTEND, "extend")];
    for (template, action) in actions {
        x.to(Method::POST, template, &at(UNKNOWN_JOB, action))
            .answers(StatusCode::NOT_FOUND)
            .await;
        x.to(Method::POST, template, &at("%FF", action))
            .answers(StatusCode::BAD_REQUEST)
            .await;
    }
}

/// The read path, the page, the probes and the document: every one answers, and the seat map
/// also 304s, 400s and 404s.
pub async fn reads(x: &Expect<'_>) {
    let map = x
        .to(Method::GET, SEATS, "/v1/events/e1/seats")
        .answers(StatusCode::OK)
        .await;
    x.to(Method::GET, SEATS, "/v1/events/e1/seats")
        .header("If-None-Match", map.header("etag"))
        .answers(StatusCode::NOT_MODIFIED)
        .await;
    for bad in [
        "/v1/events/e1/seats?section=A&section=B",
        "/v1/events/%FF/seats",
    ] {
        x.to(Method::GET, SEATS, bad)
            .answers(StatusCode::BAD_REQUEST)
            .await;
    }
    for missing in ["/v1/events/nope/seats", "/v1/events/e1/seats?section=Z"] {
        x.to(Method::GET, SEATS, missing)
            .answers(StatusCode::NOT_FOUND)
            .await;
    }
    for (template, path) in [
        (EVENTS, EVENTS),
        ("/", "/"),
        ("/events/{event_id}", "/events/e1"),
        ("/ui/app.js", "/ui/app.js"),
        ("/ui/app.css", "/ui/app.css"),
        ("/ui/config.json", "/ui/config.json"),
        ("/healthz", "/healthz"),
        ("/readyz", "/readyz"),
        ("/openapi.json", "/openapi.json"),
    ] {
        x.to(Method::GET, template, path)
            .answers(StatusCode::OK)
            .await;
    }
}

/// A method a path has no operation for: 405, documented on every operation of the path, with
/// an `Allow` header naming the documented methods.
pub async fn other_methods(x: &Expect<'_>) {
    let paths = x.document["paths"].as_object().unwrap().clone();
    for (template, item) in paths {
        let path = super::super::concrete(&template);
        let methods: Vec<String> = item.as_object().unwrap().keys().cloned().collect();
        let unused = ["delete", "put", "patch"]
            .into_iter()
            .find(|m| !methods.iter().any(|have| have == m))
            .unwrap();
        let unused = Method::from_bytes(unused.to_uppercase().as_bytes()).unwrap();
        for method in &methods {
            let documented = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let reply = x
                .sent_as(unused.clone(), documented, &template, &path)
                .answers(StatusCode::METHOD_NOT_ALLOWED)
                .await;
            let allow = reply.header("allow").to_lowercase();
            for method in &methods {
                assert!(
                    allow.contains(method.as_str()),
                    "{template}: Allow: {allow}"
                );
            }
        }
    }
}
