//! A claim's look at the lines it must respect, and its join of a line's end as a plan.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;

use super::codes::{self, Limits};
use super::serve::serve_after;
use crate::domain::{ClaimDecision, Intent, Job, JobStatus, Reason, SaleTerms, Seat, Section};
use crate::ports::{BackendError, ClaimOutcome};
use crate::step::{Commit, Decided};
use crate::step::{Committed, CountChange, Misses, Plan, Write};

/// What a claim learnt of the lines of the sections it would take seats from.
#[derive(Debug, Default)]
pub(super) struct Lines {
    /// The sections whose line the claim must respect.
    pub(super) lined: BTreeSet<Section>,
    /// The sections nobody ever waited in: a join there forms the line.
    pub(super) forming: BTreeSet<Section>,
}

/// The lines of the claim's sections (its section, or its seats'), where the event's waitlist
/// is open. A marked section is lined without a read of its line where the claim would wait or
/// be refused anyway (too few free seats for a section request; only taken seats for an exact
/// one, whose refusal then names the line); elsewhere the line's head says whether anyone waits.
pub(super) async fn of_claim(
    store: &impl Commit,
    intent: &Intent,
    terms: &SaleTerms,
    candidates: &[Seat],
    now: Timestamp,
) -> Result<Lines, BackendError> {
    let mut lines = Lines::default();
    if !terms.waitlist.is_open() {
        return Ok(lines);
    }
    // Each section, and whether the claim could take seats there now.
    let mut sections: BTreeMap<&Section, bool> = BTreeMap::new();
    if let Some(section) = intent.request.section() {
        let fits = matches!(
            terms.decide_freely(&intent.request, candidates, now),
            ClaimDecision::Hold { .. }
        );
        sections.insert(section, fits);
    }
    for seat in candidates {
        *sections.entry(&seat.section).or_default() |= seat.state.is_claimable(now);
    }
    for (section, could_take) in sections {
        if !store.line_marked(&intent.event_id, section).await? {
            lines.forming.insert(section.clone());
            continue;
        }
        let waits = !could_take || store.has_waiters(&intent.event_id, section).await?;
        if waits {
            lines.lined.insert(section.clone());
        }
    }
    Ok(lines)
}

/// Why a join did not commit.
pub(super) enum Refused {
    /// The buyer's count has no room.
    OverLimit,
    /// The access code's count has no room (the reason names it).
    Code(Reason),
}

/// Puts a PENDING job at the end of its section's line: its move to WAITLISTED with its event
/// and its place, on condition that the waitlist is still open, marking the line when the join
/// `forms` it, and its quantity added to the buyer's count under a seat limit and to its access
/// code's, each under its ceiling (`limits`). Then the line is served at once: a line with
/// seats it fits and nobody ahead did serves it there. A waitlist closed since the terms were
/// read is a retry's matter: the retry decides as the event now stands.
pub(super) async fn join(
    store: &impl Commit,
    job: &Job,
    now: Timestamp,
    forms: bool,
    limits: Limits,
) -> Result<Result<Decided, Refused>, BackendError> {
    let Ok(waiting) = job.join_waitlist(now) else {
        return Ok(Ok((ClaimOutcome::AlreadyDecided(job.status), None)));
    };
    let mut writes = vec![
        Write::Job(Box::new(waiting.clone())),
        Write::Join { forms },
        Write::LineOpen,
    ];
    let seats = u32::try_from(job.request.quantity()).unwrap_or(u32::MAX);
    if let Some(ceiling) = limits.buyer {
        writes.push(Write::Count(CountChange::Wait { seats, ceiling }));
    }
    if let Some(code) = limits.code {
        writes.push(code.wait(seats));
    }
    let plan = Plan::new(job, now, writes);
    let failed = match store.commit(&plan).await? {
        Committed::Written(_) => return served_at_once(store, &waiting.job).await.map(Ok),
        Committed::Failed(failed) => Misses::of(&plan, &failed),
    };
    if failed.job {
        return store.decided(job.job_id, now).await.map(Ok);
    }
    if !failed.line_closed && failed.count {
        return Ok(Err(Refused::OverLimit));
    }
    if !failed.line_closed && failed.code_count {
        return Ok(Err(Refused::Code(codes::used_up())));
    }
    Err(BackendError::transient(format!(
        "job {}: the waitlist of event {} closed while it joined",
        job.job_id, job.event_id
    )))
}

/// A job that just joined its line, after the line is served.
async fn served_at_once(store: &impl Commit, waiting: &Job) -> Result<Decided, BackendError> {
    serve_after(store, waiting, Vec::new()).await;
    let now_stands = store.job(waiting.job_id).await?;
    Ok(
        match now_stands.filter(|job| job.status != JobStatus::Waitlisted) {
            // Served at once: the line had seats it fits and nobody ahead did.
            Some(held) => (ClaimOutcome::of_decided(&held), None),
            None => (ClaimOutcome::of_decided(waiting), None),
        },
    )
}
