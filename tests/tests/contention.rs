//! A flash sale in miniature: hundreds of buyers race for a few seats over real HTTP.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

use std::sync::Arc;
use std::time::{Duration, Instant};

use seatclaim_e2e::{TestApp, check_invariants, test_backend};
use seatclaim_runtime::config::BackendKind;
use serde_json::{Value, json};

/// Buyers in the race: 500 on the embedded backend, fewer on the (slow, serialised) emulator.
fn buyers() -> usize {
    match test_backend() {
        BackendKind::Embedded => 500,
        BackendKind::Aws => 150,
    }
}
const ROWS: u32 = 5;
const PER_ROW: u32 = 10;

/// Buyer `n`'s request: mostly one exact seat from a hot block, some multi-seat, some any-in-section.
fn request(n: usize) -> Value {
    let seat = |k: usize| {
        format!(
            "A-{}-{}",
            k % ROWS as usize + 1,
            k / ROWS as usize % PER_ROW as usize + 1
        )
    };
    let buyer = format!("buyer-{n}");
    match n % 4 {
        0 | 1 => json!({"buyer_id": buyer, "seat_ids": [seat(n % 20)]}),
        2 => {
            json!({"buyer_id": buyer, "seat_ids": [seat(n % 50), seat((n + 7) % 50), seat((n + 13) % 50)]})
        }
        _ => json!({"buyer_id": buyer, "section": "A", "quantity": n % 3 + 1}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_racing_buyers_never_hold_a_seat_twice() {
    let app = Arc::new(TestApp::spawn().await);
    app.create_grid("sale", ROWS, PER_ROW, 300).await;
    let count = buyers();
    let started = Instant::now();
    let buyers: Vec<_> = (0..count)
        .map(|n| {
            let app = Arc::clone(&app);
            tokio::spawn(async move {
                let job_id = app
                    .reserve_ok("sale", &format!("key-{n}"), &request(n))
                    .await;
                app.decided(&job_id, Duration::from_secs(60)).await
            })
        })
        .collect();
    let mut jobs = Vec::with_capacity(count);
    for buyer in buyers {
        jobs.push(buyer.await.expect("every buyer finishes"));
    }
    let elapsed = started.elapsed();
    let tally = check_invariants(&jobs, &app.seat_map("sale").await);
    let claimed: usize = jobs
        .iter()
        .filter(|j| j["status"] == "HELD")
        .map(|j| j["seat_ids"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(tally.held_seats, claimed);
    assert_eq!(
        tally.held + tally.rejected,
        count,
        "every job is HELD or REJECTED"
    );
    assert!(tally.held > 0 && tally.rejected > 0, "{tally:?}");
    eprintln!(
        "contention: {count} buyers ({:?}), {} seats, {} jobs held {} seats, {} rejected, {:.2}s",
        test_backend(),
        ROWS * PER_ROW,
        tally.held,
        tally.held_seats,
        tally.rejected,
        elapsed.as_secs_f64()
    );
}
