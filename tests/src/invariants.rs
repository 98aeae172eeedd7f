use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// How a set of jobs ended, for the test's report.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Jobs holding seats.
    pub held: usize,
    /// Jobs rejected.
    pub rejected: usize,
    /// Jobs failed.
    pub failed: usize,
    /// Seats the seat map shows HELD.
    pub held_seats: usize,
}

/// Checks seatclaim's invariants from the outside, from the final job views and the seat map:
/// every job is decided, no seat is held by two jobs, every HELD job's seats show HELD, and the
/// number of HELD seats equals the seats the HELD jobs claimed. Panics with the first violation.
pub fn check_invariants(jobs: &[Value], seat_map: &Value) -> Tally {
    let mut tally = Tally::default();
    let mut owner: HashMap<&str, &str> = HashMap::new();
    for job in jobs {
        let job_id = job["job_id"].as_str().expect("a job id");
        match job["status"].as_str().expect("a status") {
            "HELD" => {
                tally.held += 1;
                for seat in job["seat_ids"].as_array().expect("seat ids") {
                    let seat = seat.as_str().expect("a seat id");
                    if let Some(other) = owner.insert(seat, job_id) {
                        panic!("seat {seat} is held by jobs {other} and {job_id}");
                    }
                }
            }
            "REJECTED" => tally.rejected += 1,
            "FAILED" => tally.failed += 1,
            other => panic!("job {job_id} ended the test {other}"),
        }
    }
    let shown_held: HashSet<&str> = seat_map["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .filter(|seat| seat["state"] == "HELD")
        .map(|seat| seat["seat_id"].as_str().expect("a seat id"))
        .collect();
    tally.held_seats = shown_held.len();
    let claimed: HashSet<&str> = owner.keys().copied().collect();
    assert_eq!(
        shown_held, claimed,
        "the seat map's HELD seats differ from the seats HELD jobs own"
    );
    tally
}
