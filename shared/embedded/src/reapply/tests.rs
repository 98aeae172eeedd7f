use jiff::Timestamp;
use rusqlite::Connection;

use super::*;
use crate::job_rows::{Admitted, insert_job};
use seatclaim_core::domain::{BuyerId, IdempotencyKey, Intent, Job, SeatRequest, Transition};

const EVENT: &str =
    "INSERT INTO events (event_id, name, hold_ms, created_at) VALUES ('e1', 'E', 100000, 0);
     INSERT INTO seats (event_id, seat_id, section, position, state) VALUES
         ('e1', 'A-1', 'A', 0, 'AVAILABLE'), ('e1', 'A-2', 'A', 1, 'AVAILABLE');";

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).expect("instant")
}

fn seat(id: &str) -> SeatId {
    SeatId::parse(id).expect("seat id")
}

/// A database at its backup's moment: the event e1 with seats, all free.
fn database() -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut conn = Connection::open(dir.path().join("db.sqlite3")).expect("open");
    crate::migrations::migrate(&mut conn).expect("migrate");
    conn.execute_batch(EVENT).expect("event");
    (dir, conn)
}

fn pending(buyer: &str) -> Job {
    Job::pending(&Intent {
        access: None,
        job_id: JobId::new(),
        event_id: EventId::parse("e1").expect("event id"),
        buyer_id: BuyerId::parse(buyer).expect("buyer id"),
        request: SeatRequest::Seats(vec![seat("A-1")]),
        accepted_at: at(1),
        opens_at: None,
    })
}

/// Stores `transition`'s job and its seat as the live store did, in the backup.
fn store(conn: &mut Connection, transition: &Transition) {
    let tx = conn.transaction().expect("tx");
    let key = IdempotencyKey::parse(&transition.job.job_id.to_string()).expect("key");
    let admitted = Admitted {
        key: &key,
        fingerprint: "f".into(),
        at: at(1),
    };
    insert_job(&tx, &transition.job, &admitted).expect("job");
    let state = match transition.job.status {
        JobStatus::Held => SeatState::Held {
            job_id: transition.job.job_id,
            until: at(100),
        },
        _ => SeatState::Sold {
            job_id: transition.job.job_id,
        },
    };
    write_seat(&tx, &transition.job.event_id, &seat("A-1"), &state).expect("seat");
    tx.commit().expect("commit");
}

fn run(conn: &mut Connection, events: &[ReservationEvent]) -> Reapplication {
    let tx = conn.transaction().expect("tx");
    let report = reapply_events(&tx, events).expect("reapplied");
    tx.commit().expect("commit");
    report
}

fn seat_now(conn: &mut Connection, id: &str) -> Option<SeatState> {
    let tx = conn.transaction().expect("tx");
    seat_state(&tx, &EventId::parse("e1").expect("event id"), &seat(id)).expect("seat")
}

fn job_now(conn: &mut Connection, id: JobId) -> Option<Job> {
    let tx = conn.transaction().expect("tx");
    load_job(&tx, id).expect("job")
}

#[test]
fn a_job_sold_after_the_backup_is_recreated_sold_and_a_second_run_changes_nothing() {
    let (_dir, mut conn) = database();
    let held = pending("b1")
        .hold(vec![seat("A-1")], at(100), None, at(10))
        .expect("hold");
    let sold = held
        .job
        .confirm(&seatclaim_core::domain::Tender::Nothing, at(20))
        .expect("live")
        .expect("sold")
        .transition;
    let events = [held.event, sold.event];
    let report = run(&mut conn, &events);
    assert_eq!(report.reapplied.len(), 1, "{report:?}");
    assert!(report.reapplied[0].created && report.not_reapplied.is_empty());
    let job = job_now(&mut conn, sold.job.job_id).expect("recreated");
    assert_eq!(
        (job.status, job.seat_ids),
        (JobStatus::Sold, vec![seat("A-1")])
    );
    let owner = Some(SeatState::Sold {
        job_id: sold.job.job_id,
    });
    assert_eq!(seat_now(&mut conn, "A-1"), owner);
    let again = run(&mut conn, &events);
    assert_eq!(
        (again.reapplied.len(), again.unchanged),
        (0, 1),
        "{again:?}"
    );
    assert_eq!(seat_now(&mut conn, "A-1"), owner);
}

#[test]
fn a_cancel_gives_the_seat_back_and_a_later_hold_takes_it() {
    let (_dir, mut conn) = database();
    let held = pending("b1")
        .hold(vec![seat("A-1")], at(100), None, at(1))
        .expect("hold");
    store(&mut conn, &held);
    let cancelled = held
        .job
        .cancel(at(20))
        .expect("live")
        .expect("cancelled")
        .transition;
    let next = pending("b2")
        .hold(vec![seat("A-1")], at(130), None, at(30))
        .expect("hold");
    // The hold is listed first: the order of the log within one run does not matter.
    let report = run(&mut conn, &[next.event.clone(), cancelled.event]);
    assert_eq!(report.reapplied.len(), 2, "{report:?}");
    let status = job_now(&mut conn, held.job.job_id).expect("kept").status;
    assert_eq!(status, JobStatus::Cancelled);
    let hold = SeatState::Held {
        job_id: next.job.job_id,
        until: at(130),
    };
    assert_eq!(seat_now(&mut conn, "A-1"), Some(hold));
}

#[test]
fn a_seat_another_job_bought_is_reported_and_left_alone() {
    let (_dir, mut conn) = database();
    let first = pending("b1")
        .hold(vec![seat("A-1")], at(100), None, at(1))
        .expect("hold");
    let bought = first
        .job
        .confirm(&seatclaim_core::domain::Tender::Nothing, at(2))
        .expect("live")
        .expect("sold")
        .transition;
    store(&mut conn, &bought);
    let second = pending("b2")
        .hold(vec![seat("A-1")], at(130), None, at(30))
        .expect("hold");
    let report = run(&mut conn, &[second.event]);
    assert!(report.reapplied.is_empty(), "{report:?}");
    let why = &report.not_reapplied[0].why;
    let taken = NotReapplied::SeatTaken {
        seat_id: seat("A-1"),
        holder: bought.job.job_id,
        sold: true,
    };
    assert_eq!(why, &taken);
    assert_eq!(job_now(&mut conn, second.job.job_id), None, "not recreated");
    assert_eq!(
        seat_now(&mut conn, "A-1"),
        Some(SeatState::Sold {
            job_id: bought.job.job_id
        })
    );
}
