//! The webhook as an attacker tries it: forged, tampered, replayed and garbage deliveries never
//! answer 5xx and never sell a seat; and a webhook, a payment service's confirm, the buyer's
//! cancel and the hold's expiry racing on one job leave exactly one outcome.

use axum::http::{Method, StatusCode};
use jiff::SignedDuration;
use seatclaim_core::ports::Clock;
use seatclaim_e2e::seeded_rng;
use seatclaim_e2e::stripe::{SECRET, payment_succeeded, signature};
use seatclaim_e2e::tokens::{claims, hs256_token};
use serde_json::{Value, json};

use super::payments::{deliver_signed, held, held_as, job_as, priced_app};

/// One forged or tampered delivery of `body` (whose valid header is `good`, signed at `now`):
/// the header and body to send. None of them carries a valid signature of what it sends.
fn tampered(rng: &mut fastrand::Rng, good: &str, body: &str, now: i64) -> (String, String) {
    let flip = |text: &str, rng: &mut fastrand::Rng| {
        let mut bytes = text.as_bytes().to_vec();
        let at = rng.usize(..bytes.len());
        bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
        String::from_utf8_lossy(&bytes).into_owned()
    };
    match rng.u8(..9) {
        0 => (flip(good, rng), body.to_owned()),
        1 => (good.to_owned(), flip(body, rng)),
        2 => (good.to_owned(), format!("{body} ")),
        3 => (
            signature(SECRET, now - 301 - rng.i64(..100_000), body.as_bytes()),
            body.to_owned(),
        ),
        4 => (
            signature(SECRET, now + 301 + rng.i64(..100_000), body.as_bytes()),
            body.to_owned(),
        ),
        5 => (
            signature("whsec_guess", now, body.as_bytes()),
            body.to_owned(),
        ),
        6 => (
            format!("t={now},v1={}", "ab".repeat(rng.usize(..80))),
            body.to_owned(),
        ),
        7 => {
            let length = rng.usize(..300);
            let header = std::iter::repeat_with(|| rng.alphanumeric())
                .take(length)
                .collect();
            (header, body.to_owned())
        }
        _ => (good.replace("v1=", "v0="), body.to_owned()),
    }
}

#[tokio::test]
async fn forged_tampered_and_replayed_webhooks_never_sell_and_never_fail() {
    let mut rng = seeded_rng();
    let app = priced_app(None).await;
    let job = held(&app, "fuzzed", &["A-1-5"]).await;
    let id = job["job_id"].as_str().unwrap();
    let body = payment_succeeded("evt_fuzz", id, 2500, "eur").to_string();
    let now = app.clock.now().as_second();
    let good = signature(SECRET, now, body.as_bytes());
    for round in 0..150 {
        let (header, sent) = tampered(&mut rng, &good, &body, now);
        let reply = deliver_signed(&app, &header, sent.clone()).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "round {round}: {header:?} {sent:?}: {}",
            reply.text()
        );
    }
    // Signed, but not a Stripe event, or not a payment of this hold: never 5xx, never sold.
    for round in 0..50 {
        let garbage = match rng.u8(..4) {
            0 => {
                let length = rng.usize(..200);
                std::iter::repeat_with(|| rng.char(..))
                    .take(length)
                    .collect()
            }
            1 => json!({"id": rng.u64(..), "type": [1, 2]}).to_string(),
            2 => json!({"id": "evt_g", "type": "payment_intent.succeeded",
                "data": {"object": {"amount_received": -rng.i64(1..), "currency": "€€€",
                    "metadata": {"job_id": id}}}})
            .to_string(),
            _ => payment_succeeded("evt_g", id, rng.u64(..2500), "eur").to_string(),
        };
        let header = signature(SECRET, now, garbage.as_bytes());
        let reply = deliver_signed(&app, &header, garbage.clone()).await;
        assert!(
            reply.status == StatusCode::BAD_REQUEST || reply.json()["outcome"] != "paid",
            "round {round}: {garbage:?}: {} {}",
            reply.status,
            reply.text()
        );
    }
    assert_eq!(
        app.job(id).await["status"],
        "HELD",
        "nothing forged sold the hold"
    );
    // The genuine delivery sells it; replayed once its timestamp is stale, it is refused.
    let genuine = signature(SECRET, app.clock.now().as_second(), body.as_bytes());
    let paid = deliver_signed(&app, &genuine, body.clone()).await;
    assert_eq!(paid.json()["outcome"], "paid", "{}", paid.text());
    app.clock.advance(SignedDuration::from_secs(302));
    let replayed = deliver_signed(&app, &genuine, body).await;
    assert_eq!(
        replayed.status,
        StatusCode::BAD_REQUEST,
        "{}",
        replayed.text()
    );
    assert_eq!(app.job(id).await["status"], "SOLD");
}

#[tokio::test]
async fn a_webhook_a_paid_confirm_a_cancel_and_the_expiry_racing_leave_one_outcome() {
    let secret = "race-test-secret-of-at-least-32-bytes";
    let app = priced_app(Some(secret)).await;
    let buyer = hs256_token(secret, &claims("b1", &json!({})));
    let service = hs256_token(
        secret,
        &claims("psp", &json!({"scope": "seatclaim/payments"})),
    );
    let bearer = |token: &str| format!("Bearer {token}");
    for n in 1..=16 {
        let seat = format!("A-{}-{}", 2 + (n - 1) / 10, 1 + (n - 1) % 10);
        let id = held_as(&app, &buyer, &format!("race-{n}"), &seat).await;
        // Signed in the middle of the tolerance, so the expiry's jump does not make it stale.
        let body = payment_succeeded(&format!("evt_race_{n}"), &id, 2500, "eur").to_string();
        let header = signature(SECRET, app.clock.now().as_second() + 150, body.as_bytes());
        let settle = |action: &str, token: &str, payment: Option<Value>| {
            let call = app
                .request(Method::POST, &format!("/v1/jobs/{id}/{action}"))
                .header("authorization", &bearer(token));
            match payment {
                Some(payment) => call.json(&payment),
                None => call,
            }
            .send()
        };
        let paid = json!({"amount": 2500, "currency": "EUR", "payment_ref": format!("psp-{n}")});
        let (webhook, confirmed, cancelled, ()) = tokio::join!(
            deliver_signed(&app, &header, body),
            settle("confirm", &service, Some(paid)),
            settle("cancel", &buyer, None),
            async {
                if n % 2 == 0 {
                    app.clock.advance(SignedDuration::from_secs(300));
                }
            },
        );
        let winners = [
            webhook.json()["outcome"] == "paid",
            confirmed.status == StatusCode::OK,
            cancelled.status == StatusCode::OK,
        ];
        let final_status = job_as(&app, &buyer, &id).await["status"].clone();
        let expected = match winners {
            [true, false, false] | [false, true, false] => "SOLD",
            [false, false, true] => "CANCELLED",
            [false, false, false] => "EXPIRED",
            _ => panic!("round {n}: more than one outcome: {winners:?} ({final_status})"),
        };
        assert_eq!(final_status, expected, "round {n}: {winners:?}");
        for reply in [&confirmed, &cancelled] {
            assert!(
                !reply.status.is_server_error(),
                "round {n}: {}",
                reply.text()
            );
        }
        assert_eq!(
            webhook.status,
            StatusCode::OK,
            "round {n}: {}",
            webhook.text()
        );
        let state = app.seat_state("paid", &seat).await;
        let seat_state = if expected == "SOLD" {
            "SOLD"
        } else {
            "AVAILABLE"
        };
        assert_eq!(state, seat_state, "round {n}: seat {seat}");
    }
}
