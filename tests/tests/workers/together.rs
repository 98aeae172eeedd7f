//! Seats together, raced across worker processes: 300 buyers ask for 1 to 4 adjacent seats of
//! one 20x20 section, decided by three `seatclaim-worker` processes at once. Every hold is a
//! block in one row, no seat is held twice, the first buyer (alone on the empty section) gets
//! row 1's middle, and the section ends with every seat held but for runs too short for every
//! request that was rejected.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures_util::StreamExt;
use seatclaim_e2e::seeded_rng;
use serde_json::{Value, json};

use super::{WORKERS, sale_with_workers};

const BUYERS: usize = 300;
const ROWS: u32 = 20;
const PER_ROW: u32 = 20;

/// `(row, number)` of a seat `T-r-n`.
fn place(seat: &Value) -> (u32, u32) {
    let id = seat.as_str().unwrap();
    let mut parts = id.rsplitn(3, '-');
    let number = parts.next().unwrap().parse().unwrap();
    let row = parts.next().unwrap().parse().unwrap();
    (row, number)
}

/// The lengths of the runs of adjacent free seats left in each row.
fn free_runs(held: &BTreeSet<(u32, u32)>) -> Vec<u32> {
    let mut runs = Vec::new();
    for row in 1..=ROWS {
        let mut run = 0;
        for number in 1..=PER_ROW + 1 {
            if number <= PER_ROW && !held.contains(&(row, number)) {
                run += 1;
            } else if run > 0 {
                runs.push(run);
                run = 0;
            }
        }
    }
    runs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_workers_hold_blocks_in_one_row_and_leave_no_usable_run() {
    let (app, _workers) = sale_with_workers(
        json!({"event_id": "tw", "name": "Together", "hold_seconds": 600, "max_seats_per_buyer": 0,
            "sections": [{"section": "T", "rows": ROWS, "seats_per_row": PER_ROW}]}),
    )
    .await;
    let mut rng = seeded_rng();
    let wanted: Vec<u32> = (0..BUYERS).map(|_| rng.u32(1..=4)).collect();
    let body = |n: usize| json!({"buyer_id": format!("b{n}"), "section": "T", "quantity": wanted[n], "together": true});
    // The first buyer alone, on the empty section.
    let first = app.reserve_ok("tw", "k0", &body(0)).await;
    let first = app.decided(&first, Duration::from_secs(30)).await;
    let first_seats: Vec<(u32, u32)> = first["seat_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(place)
        .collect();
    assert!(
        first_seats.iter().all(|(row, _)| *row == 1)
            && first_seats.iter().any(|(_, n)| matches!(n, 10 | 11)),
        "the first buyer gets row 1's middle: {first_seats:?}"
    );
    let mut job_ids = vec![first["job_id"].as_str().unwrap().to_owned()];
    // The rest at once (a few dozen in flight), for the workers to race over.
    let posts = futures_util::stream::iter(1..BUYERS).map(|n| {
        let (app, body) = (&app, body(n));
        async move { app.reserve_ok("tw", &format!("k{n}"), &body).await }
    });
    job_ids.extend(posts.buffered(32).collect::<Vec<_>>().await);

    let mut held = BTreeSet::new();
    let mut rejected = Vec::new();
    for (n, job) in job_ids.iter().enumerate() {
        let job = app.decided(job, Duration::from_secs(120)).await;
        match job["status"].as_str().unwrap() {
            "HELD" => {
                let mut seats: Vec<(u32, u32)> = job["seat_ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(place)
                    .collect();
                seats.sort_unstable();
                assert_eq!(seats.len(), wanted[n] as usize, "{job}");
                assert!(
                    seats
                        .windows(2)
                        .all(|p| p[0].0 == p[1].0 && p[1].1 == p[0].1 + 1),
                    "not a block in one row: {seats:?}"
                );
                for seat in seats {
                    assert!(held.insert(seat), "{seat:?} held twice");
                }
            }
            "REJECTED" => {
                assert_eq!(
                    job["reason"],
                    format!("no {} adjacent seats in section T", wanted[n]),
                    "{job}"
                );
                rejected.push(wanted[n]);
            }
            other => panic!("job {n} ended {other}: {job}"),
        }
    }
    let runs = free_runs(&held);
    let strands = runs.iter().filter(|run| **run == 1).count();
    let by_row: BTreeMap<u32, usize> = held.iter().fold(BTreeMap::new(), |mut rows, (row, _)| {
        *rows.entry(*row).or_default() += 1;
        rows
    });
    eprintln!(
        "together across {WORKERS} workers: {} held jobs, {} seats held in {} rows, {} free seats \
         in {} runs ({strands} single), {} rejected (smallest {:?})",
        BUYERS - rejected.len(),
        held.len(),
        by_row.len(),
        runs.iter().sum::<u32>(),
        runs.len(),
        rejected.len(),
        rejected.iter().min(),
    );
    if let Some(smallest) = rejected.iter().min() {
        let longest = runs.iter().copied().max().unwrap_or(0);
        assert!(
            longest < *smallest,
            "a run of {longest} free seats was left while a request for {smallest} was rejected"
        );
    }
    app.assert_audit_passes("tw");
}
