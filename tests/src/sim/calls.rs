//! The API calls a simulated client makes as the HTTP contract tells clients to: an admission
//! retried with the same key and body until answered, a job polled until decided, a settlement
//! retried and its answer checked against what the client was told before.

use jiff::Timestamp;

use seatclaim_core::app;
use seatclaim_core::domain::{
    BuyerId, IdempotencyKey, Job, JobAction, JobConflict, JobId, JobStatus, SeatRequest,
};
use seatclaim_core::ports::{Admission, Clock, Settled};

use super::actors::Ctx;

/// Attempts a client makes at one call before it gives up.
pub(super) const ATTEMPTS: usize = 12;
/// Polls of a job before the client stops waiting (it must still be decided in the end).
const POLLS: usize = 40;

/// Admits through `app::admit` until the API answers; `None` if it refused or never answered.
pub(super) async fn admit(
    ctx: &Ctx,
    buyer: &BuyerId,
    key: &IdempotencyKey,
    request: &SeatRequest,
) -> Option<JobId> {
    for _ in 0..ATTEMPTS {
        let event_id = ctx.plan.event.event_id.clone();
        let answer = app::admit(
            &ctx.backend,
            key,
            event_id,
            (
                buyer.clone(),
                ctx.plan
                    .presale
                    .as_ref()
                    .and_then(|p| p.access(buyer, request)),
            ),
            request.clone(),
            false,
        )
        .await;
        ctx.gate
            .log(|| format!("{buyer} {} {request:?}: {answer:?}", key.as_str()));
        // An answer ends the attempts: the job it names, or none for a refusal.
        let settled: Option<Option<JobId>> = {
            let mut ledger = ctx.ledger.borrow_mut();
            match answer {
                Ok(Admission::Accepted(job_id)) => {
                    ledger.answered(key.as_str(), job_id, true);
                    Some(Some(job_id))
                }
                Ok(Admission::Duplicate(job_id)) => {
                    ledger.answered(key.as_str(), job_id, false);
                    Some(Some(job_id))
                }
                Ok(Admission::Prequeued(job_id)) => {
                    let first = !ledger.keys.contains_key(key.as_str());
                    ledger.answered(key.as_str(), job_id, first);
                    Some(Some(job_id))
                }
                // A buyer reserving again before the opening: one intent each in the pre-queue.
                Ok(Admission::AlreadyQueued(_)) if ctx.plan.has_openings() => Some(None),
                Ok(Admission::UnknownSeats(_)) if ctx.plan.is_typo(request) => Some(None),
                Ok(other) => {
                    ledger.broken(format!("{} was refused: {other:?}", key.as_str()));
                    Some(None)
                }
                Err(_) => None,
            }
        };
        if let Some(job) = settled {
            return job;
        }
        ctx.pause(200..3_000).await;
    }
    None
}

/// Polls the job as the API shows it (`app::jobs::job`) until it is no longer `from` (PENDING:
/// the claim decides it or puts it in line; WAITLISTED: the line moves it); `None` if the buyer
/// stopped waiting.
pub(super) async fn decision(ctx: &Ctx, job_id: JobId, from: JobStatus) -> Option<Job> {
    for _ in 0..POLLS {
        ctx.pause(500..5_000).await;
        match app::jobs::job(&ctx.backend, job_id).await {
            Ok(Some(job)) if job.status != from => return Some(job),
            Ok(Some(_)) | Err(_) => {}
            Ok(None) => {
                let what = format!("job {job_id} was answered but does not exist");
                ctx.ledger.borrow_mut().broken(what);
                return None;
            }
        }
    }
    None
}

/// Confirms, cancels or extends through `app::settle` until it answers, and checks the answer against
/// the hold's deadline `until`.
pub(super) async fn settle(
    ctx: &Ctx,
    job_id: JobId,
    action: JobAction,
    until: Option<Timestamp>,
) -> Option<Settled> {
    let settled = answered(ctx, job_id, action).await?;
    check_settled(ctx, job_id, action, &settled, until);
    Some(settled)
}

/// Settles through `app::settle` until it answers; `None` if it never did.
/// A confirm brings what the deployment takes without a payment (`Plan::tender`).
pub(super) async fn answered(ctx: &Ctx, job_id: JobId, action: JobAction) -> Option<Settled> {
    let tender = ctx.plan.tender();
    for _ in 0..ATTEMPTS {
        let answer = app::settle(&ctx.backend, job_id, action, &tender).await;
        ctx.gate.log(|| format!("{action:?} {job_id}: {answer:?}"));
        match answer {
            Ok(settled) => return Some(settled),
            Err(_) => ctx.pause(200..3_000).await,
        }
    }
    None
}

/// A settle is done as asked, or refused for a reason that holds: a hold refused as lapsed
/// (or found expired) must have reached its deadline by the time the answer came, and an
/// extension moves the deadline later by the event's steps, never past the most it allows.
fn check_settled(
    ctx: &Ctx,
    job_id: JobId,
    action: JobAction,
    settled: &Settled,
    until: Option<Timestamp>,
) {
    let expected = match action {
        JobAction::Confirm => JobStatus::Sold,
        JobAction::Cancel => JobStatus::Cancelled,
        JobAction::Expire => JobStatus::Expired,
        JobAction::Extend => JobStatus::Held,
    };
    let lapsed = until.is_some_and(|until| until <= ctx.clock.now());
    let extension = ctx.plan.event.extension;
    let fine = match settled {
        Settled::Done(job) if action == JobAction::Extend => {
            // A retry after a lost answer may have extended twice; never past the most.
            let most = extension.step * i32::try_from(extension.max).unwrap_or(i32::MAX);
            job.status == expected
                && job.hold_expires_at > until
                && job
                    .hold_expires_at
                    .zip(until)
                    .is_some_and(|(new, old)| new.duration_since(old) <= most)
        }
        Settled::Done(job) => job.status == expected,
        Settled::Conflict(JobConflict::NotExtendable) => !extension.allowed(),
        Settled::Conflict(JobConflict::ExtensionsUsedUp { .. }) => action == JobAction::Extend,
        Settled::Conflict(JobConflict::HoldLapsed) => lapsed,
        Settled::Conflict(JobConflict::WrongStatus {
            status: JobStatus::Expired,
            ..
        }) => lapsed,
        Settled::Conflict(
            JobConflict::HoldLive
            | JobConflict::PaymentMismatch { .. }
            | JobConflict::PaidOtherwise
            | JobConflict::PaymentRequired { .. },
        )
        | Settled::NotFound => false,
        Settled::Conflict(JobConflict::WrongStatus { .. }) => true,
    };
    if !fine {
        let what = format!("{action:?} of job {job_id} was answered {settled:?}");
        ctx.ledger.borrow_mut().broken(what);
    }
}
