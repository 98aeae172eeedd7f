//! Confirms fired at a priced hold from the moment its `202` comes back, while worker processes
//! are still deciding the claim: none sells a seat without its payment. The API's early 402
//! reads the job first; a confirm that read it PENDING reaches the settlement after the claim
//! made it HELD, and only the domain, deciding inside the settlement's step, refuses it there.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use futures_util::future::join_all;
use seatclaim_e2e::AppOptions;
use seatclaim_e2e::stripe::SECRET;
use serde_json::json;

use super::sale_with_workers_as;

const BUYERS: usize = 40;
/// Confirm loops each buyer keeps in flight from its `202` on.
const LOOPS: usize = 6;
/// Confirms each loop sends once the job is HELD.
const AFTER_HELD: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirms_racing_the_claim_never_sell_a_priced_hold_unpaid() {
    let options = AppOptions {
        stripe_webhook_secret: Some(SECRET.to_owned()),
        buyer_rate: (1000, 1000),
        ..AppOptions::default()
    };
    let (app, _workers) = sale_with_workers_as(
        options,
        json!({"event_id": "pz", "name": "Priced", "hold_seconds": 600, "currency": "EUR",
            "sections": [{"section": "P", "rows": 4, "seats_per_row": 10, "price": 100_000}]}),
    )
    .await;
    let app = &app;
    // One of a buyer's confirm loops: until the job has been seen HELD a few times.
    let confirming = |job_id: String| async move {
        let confirm = format!("/v1/jobs/{job_id}/confirm");
        let mut answers = BTreeMap::<u16, usize>::new();
        let mut held_for = 0;
        while held_for < AFTER_HELD {
            let answer = app.request(Method::POST, &confirm).send().await;
            *answers.entry(answer.status.as_u16()).or_default() += 1;
            if answer.status == StatusCode::PAYMENT_REQUIRED {
                held_for += 1;
            } else {
                // Anything else (a 200 above all: a sale without a payment) breaks the rule.
                assert_eq!(answer.status, StatusCode::CONFLICT, "{}", answer.text());
            }
        }
        answers
    };
    let buyer = |n: usize| async move {
        let seat = format!("P-{}-{}", n / 10 + 1, n % 10 + 1);
        let body = json!({"buyer_id": format!("b{n}"), "seat_ids": [seat]});
        let job_id = app.reserve_ok("pz", &format!("k{n}"), &body).await;
        let loops = join_all((0..LOOPS).map(|_| confirming(job_id.clone()))).await;
        let mut answers = BTreeMap::<u16, usize>::new();
        for (status, count) in loops.into_iter().flatten() {
            *answers.entry(status).or_default() += count;
        }
        (app.job(&job_id).await, answers)
    };
    let outcomes = tokio::time::timeout(Duration::from_secs(120), join_all((0..BUYERS).map(buyer)))
        .await
        .expect("every buyer's job is decided");
    let mut totals = BTreeMap::<u16, usize>::new();
    for (job, answers) in outcomes {
        assert_eq!(
            job["status"], "HELD",
            "sold or lost without a payment: {job}"
        );
        for (status, count) in answers {
            *totals.entry(status).or_default() += count;
        }
    }
    // How often the race was run: confirms that met a PENDING job (409) or a HELD one (402).
    println!("confirm answers by status: {totals:?}");
}
