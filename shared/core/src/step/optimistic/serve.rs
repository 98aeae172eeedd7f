//! Serving a section's line without an interactive transaction: the line's head and the
//! section's free seats are read, the domain's `hand_out` decides who gets which (first fit in
//! line order), and each step is a plan of its own, conditioned as any claim is (each seat
//! claimable, the job still WAITLISTED, the buyer's count under its ceiling), that also deletes
//! the job's place. Servers racing on one line (a cancel and the sweeper) lose a condition and
//! read again; nobody is served twice.

use super::claim::expire_lapsed;
use super::end_wait::end_wait;
use crate::domain::{EventId, HandOut, Job, SaleTerms, Section, hand_out};
use crate::ports::BackendError;
use crate::step::Commit;
use crate::step::{Committed, CountChange, Misses, Plan, SeatChange, SeatCondition, Write};

/// Jobs of a line read in a round at first: a round serves whoever of them the free seats fit.
const LINE_PAGE: usize = 16;
/// The deepest a round reads into the line: a round that served nobody while seats are left
/// reads four times deeper the next time, up to this (the sweeper's next pass goes on).
const DEEPEST: usize = 1024;
/// Rounds of one serving: each reads the line and the seats afresh after a lost race or a fully
/// served page. Past the last, the sweeper's next pass goes on.
const SERVE_ROUNDS: usize = 8;

/// How one step of a hand-out ended.
enum Step {
    /// Written.
    Done,
    /// A condition failed (a seat taken, the job served or cancelled meanwhile): read again.
    Raced,
    /// The buyer's count left no room for the job's seats.
    OverLimit,
    /// The count remembers no wait of the job: it joined before waits counted.
    Uncounted,
}

/// How a hold from the line moves the buyer's count.
#[derive(Clone, Copy)]
enum Count {
    /// The wait, already counted, becomes the hold.
    Waited,
    /// The seats are added under the ceiling, as a claim's are (a wait from before waits counted).
    Claimed,
}

/// Hands the section's free seats to its line, first fit in line order, until no seat is left,
/// the whole line was looked at, or the rounds run out.
pub(super) async fn serve_line(
    store: &impl Commit,
    event_id: &EventId,
    section: &Section,
    terms: &SaleTerms,
) -> Result<(), BackendError> {
    if !terms.serves_line(section, store.now()) {
        return Ok(());
    }
    let mut depth = LINE_PAGE;
    for _ in 0..SERVE_ROUNDS {
        let free = store.free_seats(event_id, section, store.now()).await?;
        if free.is_empty() {
            return Ok(());
        }
        let line = store.waiting(event_id, section, depth).await?;
        let steps = hand_out(&line, &free, terms, store.now(), |_| 0);
        let mut raced = false;
        for step in &steps {
            raced = match write_step(store, step, terms).await? {
                Step::Done => false,
                Step::Raced | Step::Uncounted => true,
                Step::OverLimit => over_limit(store, &step.transition.job, terms).await?,
            };
            if raced {
                break;
            }
        }
        if raced {
            continue;
        }
        // The whole line was looked at; or nobody read fits what is left: read deeper.
        if line.len() < depth {
            return Ok(());
        }
        if steps.is_empty() {
            depth = (depth * 4).min(DEEPEST);
        }
    }
    Ok(())
}

/// One step's plan: a hold turns the wait the count remembers into a hold, or, for a job that
/// joined before waits counted, is counted as a claim.
async fn write_step(
    store: &impl Commit,
    step: &HandOut,
    terms: &SaleTerms,
) -> Result<Step, BackendError> {
    match write_step_as(store, step, terms, Count::Waited).await? {
        Step::Uncounted => write_step_as(store, step, terms, Count::Claimed).await,
        written => Ok(written),
    }
}

/// One step's plan: the seats' holds, the job's move off the line and its event, its place's
/// deletion and, under a seat limit, the buyer's count as `count` says for a hold, or the wait
/// given back for a rejection.
async fn write_step_as(
    store: &impl Commit,
    step: &HandOut,
    terms: &SaleTerms,
    count: Count,
) -> Result<Step, BackendError> {
    let job = &step.transition.job;
    let now = step.transition.event.occurred_at;
    let until = job.hold_expires_at.unwrap_or(now);
    let mut writes: Vec<Write> = (step.seats.iter())
        .map(|seat_id| Write::Seat {
            seat_id: seat_id.clone(),
            change: SeatChange::Hold { until },
            condition: SeatCondition::Claimable,
        })
        .collect();
    writes.push(Write::Job(Box::new(step.transition.clone())));
    writes.push(Write::Leave);
    let seats = u32::try_from(step.seats.len()).unwrap_or(u32::MAX);
    match (terms.limit, step.seats.is_empty(), count) {
        (None, ..) => {}
        (Some(_), true, _) => writes.push(Write::Count(CountChange::Unwait)),
        (Some(_), false, Count::Waited) => writes.push(Write::Count(CountChange::Served { until })),
        (Some(limit), false, Count::Claimed) => match limit.ceiling_for(job.request.quantity()) {
            Some(ceiling) => writes.push(Write::Count(CountChange::Hold {
                seats,
                until,
                ceiling,
            })),
            None => return Ok(Step::OverLimit),
        },
    }
    if job.code().is_some() {
        // A code's wait, counted when it joined, becomes the hold (or is given back).
        writes.push(Write::CodeCount(match step.seats.is_empty() {
            true => CountChange::Unwait,
            false => CountChange::Served { until },
        }));
    }
    let plan = Plan::new(job, now, writes);
    let failed = match store.commit(&plan).await? {
        Committed::Written(_) => return Ok(Step::Done),
        Committed::Failed(failed) => Misses::of(&plan, &failed),
    };
    let others_failed = failed.job || !failed.seats.is_empty();
    Ok(match count {
        _ if !failed.count || failed.job => Step::Raced,
        Count::Waited if !others_failed => Step::Uncounted,
        Count::Waited => Step::Raced,
        Count::Claimed => Step::OverLimit,
    })
}

/// A head whose buyer's count left no room: the buyer's lapsed holds are expired (they still
/// count until then) and the round read again, or, with nothing lapsed, the job is REJECTED for
/// the limit, as a claim would be. Either way the line is read again.
async fn over_limit(
    store: &impl Commit,
    job: &Job,
    terms: &SaleTerms,
) -> Result<bool, BackendError> {
    let ceiling = terms
        .limit
        .and_then(|limit| limit.ceiling_for(job.request.quantity()));
    if !expire_lapsed(store, &job.event_id, &job.buyer_id, ceiling, store.now()).await? {
        end_wait(store, job.job_id, &terms.limit_reason()).await?;
    }
    Ok(true)
}

/// Serves the lines a settlement may have moved (the sections of the seats it gave back, or of
/// its own place in line). A failure is logged, not returned: the settlement stands, and the
/// sweeper's next pass serves the line.
pub(super) async fn serve_after(store: &impl Commit, settled: &Job, sections: Vec<Section>) {
    let terms = match store.terms(&settled.event_id).await {
        Ok(Some(terms)) if terms.waitlist.is_open() => terms,
        _ => return,
    };
    let mut sections = sections;
    sections.extend(settled.request.section().cloned());
    sections.sort();
    sections.dedup();
    for section in &sections {
        if let Err(error) = serve_line(store, &settled.event_id, section, &terms).await {
            tracing::warn!(event = %settled.event_id, %section, %error, "serving the waitlist failed; the sweeper retries");
        }
    }
}

/// Serves every open line of every event whose waitlist is open: the sweeper's pass, which
/// hands out seats a settlement's own serving left (a crash in between, a race lost on every
/// round, a place joined just after a serving read the line).
pub async fn serve_open_lines(store: &impl Commit) -> Result<(), BackendError> {
    for (event_id, sections) in store.open_lines().await? {
        let Some(terms) = store.terms(&event_id).await? else {
            continue;
        };
        for section in &sections {
            serve_line(store, &event_id, section, &terms).await?;
        }
    }
    Ok(())
}
