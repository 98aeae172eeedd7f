//! Deciding a claim inside the store's step: the buyer's limit, then the seats as read, written
//! under the condition that they are still claimable; or the job's place in its section's line.

use std::collections::BTreeSet;

use jiff::Timestamp;

use super::StepStore;
use crate::domain::{ClaimDecision, Intent, Job, JobStatus, SaleTerms, Section, Transition};
use crate::domain::{Reason, unknown_code};
use crate::ports::{BackendError, ClaimOutcome};

/// Decides one intent and stores its transition; the job comes back too when this step decided
/// it (for the long polls). A job already decided (a redelivery) changes nothing.
pub fn claim_one(
    store: &mut impl StepStore,
    intent: &Intent,
    now: Timestamp,
) -> Result<(ClaimOutcome, Option<Job>), BackendError> {
    let Some(job) = store.job(intent.job_id)? else {
        return Err(BackendError::permanent(format!(
            "intent for unknown job {}",
            intent.job_id
        )));
    };
    if job.status != JobStatus::Pending {
        return Ok((ClaimOutcome::AlreadyDecided(job.status), None));
    }
    let transition = decide_pending(store, &job, intent, now)?;
    store.save_transition(&transition)?;
    Ok((ClaimOutcome::of(&transition), Some(transition.job)))
}

/// Decides the claim of `job`, PENDING, for `intent`: the per-buyer limit, then the seats, each
/// written under its condition. The transition comes back for the caller to store.
pub fn decide_pending(
    store: &mut impl StepStore,
    job: &Job,
    intent: &Intent,
    now: Timestamp,
) -> Result<Transition, BackendError> {
    let terms = store.terms(&intent.event_id)?.ok_or_else(|| {
        BackendError::permanent(format!("intent for unknown event {}", intent.event_id))
    })?;
    let refused = match over_limit(store, &terms, intent, now)? {
        Some(reason) => Some(reason),
        None => code_refusal(store, intent, now)?,
    };
    let decided = match refused {
        Some(reason) => job.reject(&reason, now),
        None => hold_or_reject(store, job, intent, &terms, now)?,
    };
    decided.map_err(|status| {
        BackendError::permanent(format!(
            "job {} is {}, not PENDING",
            job.job_id,
            status.as_str()
        ))
    })
}

/// The rejection's reason if the buyer's HELD, SOLD and WAITLISTED seats in the event leave no
/// room for this claim (whether it would hold or wait); counted inside the step, so racing
/// claims cannot both pass.
fn over_limit(
    store: &mut impl StepStore,
    terms: &SaleTerms,
    intent: &Intent,
    now: Timestamp,
) -> Result<Option<Reason>, BackendError> {
    let Some(limit) = terms.limit else {
        return Ok(None);
    };
    let counted = store.counted_seats(&intent.event_id, &intent.buyer_id, now)?;
    Ok((!limit.admits(counted, intent.request.quantity())).then(|| limit.reason()))
}

/// The rejection's reason if the intent's access code does not admit it now (unknown, revoked,
/// out of its window, bound to another buyer, or its seats used up): counted inside the step, so
/// racing claims on one code cannot both pass its `max_seats`.
fn code_refusal(
    store: &mut impl StepStore,
    intent: &Intent,
    now: Timestamp,
) -> Result<Option<Reason>, BackendError> {
    let Some(hash) = intent
        .access
        .as_ref()
        .and_then(|access| access.code.as_ref())
    else {
        return Ok(None);
    };
    let Some(code) = store.code(&intent.event_id, hash)? else {
        return Ok(Some(unknown_code()));
    };
    let used = store.code_used(&intent.event_id, hash, now)?;
    let quantity = intent.request.quantity();
    Ok(code.admits(&intent.buyer_id, quantity, used, now).err())
}

/// Binds the intent's code to its buyer when this hold is the code's first use and it binds.
fn bind_code(store: &mut impl StepStore, intent: &Intent) -> Result<(), BackendError> {
    let Some(hash) = intent
        .access
        .as_ref()
        .and_then(|access| access.code.as_ref())
    else {
        return Ok(());
    };
    if let Some(code) = store.code(&intent.event_id, hash)?
        && let Some(buyer) = code.binds(&intent.buyer_id)
    {
        store.bind_code(&intent.event_id, hash, &buyer)?;
    }
    Ok(())
}

/// Hands the seats a channel's release freed in the intent's section to the section's line
/// first, in this step, if the sweeper has not yet: what the line's waiters ahead fit is theirs,
/// and the claim decides on the rest.
fn serve_release(
    store: &mut impl StepStore,
    intent: &Intent,
    terms: &SaleTerms,
    now: Timestamp,
) -> Result<(), BackendError> {
    let Some(section) = intent.request.section() else {
        return Ok(());
    };
    if terms.waitlist.is_open()
        && terms.channels.released(section, now)
        && store.has_line(&intent.event_id, section)?
    {
        super::waitlist::serve_line(store, terms, &intent.event_id, section, now)?;
    }
    Ok(())
}

/// The domain's decision on the seats as read, written under the condition that they are still
/// claimable; or the job's place at the end of its section's line.
fn hold_or_reject(
    store: &mut impl StepStore,
    job: &Job,
    intent: &Intent,
    terms: &SaleTerms,
    now: Timestamp,
) -> Result<Result<Transition, JobStatus>, BackendError> {
    serve_release(store, intent, terms, now)?;
    let candidates = store.candidate_seats(intent, terms.best, now)?;
    let mut lined = BTreeSet::new();
    if terms.waitlist.is_open() {
        let sections = (intent.request.section().into_iter())
            .chain(candidates.iter().map(|seat| &seat.section));
        for section in sections {
            if !lined.contains(section) && store.has_line(&intent.event_id, section)? {
                lined.insert(section.clone());
            }
        }
    }
    let has_line = |section: &Section| lined.contains(section);
    Ok(
        match terms.decide_intent(intent, &candidates, now, has_line) {
            // The guards hold by construction here: the step decides and writes in one
            // transaction (or under one lock), where no other claim runs between the two.
            ClaimDecision::Hold {
                seat_ids,
                until,
                amount_due,
                ..
            } if store.hold_seats(job, &seat_ids, now, until)? => {
                bind_code(store, intent)?;
                job.hold(seat_ids, until, amount_due, now)
            }
            // A seat changed since it was read: the condition refused it, so the claim is lost.
            ClaimDecision::Hold { .. } => job.reject(&Reason::seat_unavailable(), now),
            ClaimDecision::Reject { reason } => job.reject(&reason, now),
            ClaimDecision::Waitlist => job.join_waitlist(now),
        },
    )
}
