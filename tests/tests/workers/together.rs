//! Seats together, raced across worker processes: 300 buyers ask for 1 to 4 adjacent seats of
//! one 20x20 section, decided by three `seatclaim-worker` processes at once. Every hold is a
//! block in one row, no seat is held twice, the first buyer (alone on the empty section) gets
//! row 1's middle, and the section ends with every seat held but for runs too short for every
//! request that was rejected. Under capacity, their racing blocks strand no single seat.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures_util::StreamExt;
use seatclaim_e2e::{TestApp, seeded_rng};
use serde_json::{Value, json};

use super::{WORKERS, sale_with_workers};

const BUYERS: usize = 300;
/// Requests of the race under capacity: 40 of 2 to 4 seats fill at most 160 of 400.
const UNDER_CAPACITY: usize = 40;
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
    job_ids.extend(reserve_at_once(&app, "tw", (1..BUYERS).map(body).collect()).await);
    let (held, rejected) = decided_blocks(&app, &job_ids, &wanted).await;
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
    app.relay_caught_up(Duration::from_secs(180)).await;
    app.assert_audit_passes("tw");
}

/// Posts every body to `event` at once (a few dozen in flight), for the workers to race over;
/// the job ids in the bodies' order.
async fn reserve_at_once(app: &TestApp, event: &str, bodies: Vec<Value>) -> Vec<String> {
    let posts = futures_util::stream::iter(bodies.into_iter().enumerate()).map(|(n, body)| {
        let key = format!("k{}", n + 1);
        async move { app.reserve_ok(event, &key, &body).await }
    });
    posts.buffered(32).collect().await
}

/// Waits for each job (which wanted `wanted[n]` seats together) to be decided: a HELD job's
/// seats are a block in one row that nobody else holds, a REJECTED job's reason the block's.
/// The seats held, and the quantities rejected.
async fn decided_blocks(
    app: &TestApp,
    job_ids: &[String],
    wanted: &[u32],
) -> (BTreeSet<(u32, u32)>, Vec<u32>) {
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
    (held, rejected)
}

/// Under capacity, blocks chosen by three processes at once strand no single seat: a block is
/// written on condition that the seats beside it its choice read as free are still free, so two
/// claims that chose around the same seats cannot both commit (alone, a claim strands none while
/// a block that strands none exists, which on a section a third full always does).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_workers_under_capacity_strand_no_single_seat() {
    let (app, _workers) = sale_with_workers(
        json!({"event_id": "tu", "name": "Together, under capacity", "hold_seconds": 600,
            "max_seats_per_buyer": 0,
            "sections": [{"section": "T", "rows": ROWS, "seats_per_row": PER_ROW}]}),
    )
    .await;
    let mut rng = seeded_rng();
    let wanted: Vec<u32> = (0..UNDER_CAPACITY).map(|_| rng.u32(2..=4)).collect();
    let bodies = (0..UNDER_CAPACITY)
        .map(|n| json!({"buyer_id": format!("b{n}"), "section": "T", "quantity": wanted[n], "together": true}))
        .collect();
    let job_ids = reserve_at_once(&app, "tu", bodies).await;
    let (held, rejected) = decided_blocks(&app, &job_ids, &wanted).await;
    assert!(rejected.is_empty(), "under capacity, every block is held");
    let runs = free_runs(&held);
    let singles: Vec<u32> = runs.iter().copied().filter(|run| *run == 1).collect();
    eprintln!(
        "under capacity across {WORKERS} workers: {} seats held, {} free runs, {} single",
        held.len(),
        runs.len(),
        singles.len()
    );
    assert!(singles.is_empty(), "single seats stranded: {runs:?}");
    app.relay_caught_up(Duration::from_secs(180)).await;
    app.assert_audit_passes("tu");
}
