//! A buyer, as a client of the API: admits a reservation under a key of its own (retrying on
//! failure with the same key and body, as the HTTP contract tells clients to), sometimes retries
//! a success or reuses the key for another request, polls its job, sometimes extends the hold,
//! and confirms, cancels or lets the hold lapse, retrying the settle too. Every answer is checked against what the buyer was
//! told before: a retry must name the same job, a repeated settle must change nothing.

use std::collections::BTreeMap;
use std::rc::Rc;

use jiff::Timestamp;

use seatclaim_core::app;
use seatclaim_core::domain::{
    BuyerId, IdempotencyKey, Job, JobAction, JobConflict, JobId, JobStatus, SeatRequest,
};
use seatclaim_core::ports::{Admission, Settled};

use super::actors::Ctx;
use super::adversary::AdversaryCounts;
use super::payer::pay_for;
use super::payments::Payments;
use seatclaim_core::ports::Clock;

/// Attempts a client makes at one call before it gives up.
pub(super) const ATTEMPTS: usize = 12;
/// Polls of a job before the buyer stops waiting (it must still be decided in the end).
const POLLS: usize = 40;

/// What the buyers were told, and what they found wrong.
#[derive(Debug, Default)]
pub struct Ledger {
    /// The job each key was answered with.
    pub keys: BTreeMap<String, JobId>,
    /// Broken promises, in the order found.
    pub violations: Vec<String>,
    /// Retries of a request already answered (each must name the same job).
    pub retries: u64,
    /// Confirms and cancels that went through.
    pub settled: u64,
    /// Replays the operator ran.
    pub replays: u64,
    /// Copies the queue delivered on its own.
    pub duplicates: u64,
    /// Every payment the simulated provider took, by reference (`payments.rs`).
    pub payments: Payments,
    /// What the adversaries did.
    pub adversaries: AdversaryCounts,
}

impl Ledger {
    /// Notes a broken promise.
    pub(super) fn broken(&mut self, what: String) {
        self.violations.push(what);
    }

    /// Records an answer naming `job_id` for `key`; every answer for a key names one job, and
    /// only the first can be `Accepted`.
    fn answered(&mut self, key: &str, job_id: JobId, accepted: bool) {
        match self.keys.get(key) {
            Some(first) if *first != job_id => self.broken(format!(
                "key {key} was answered with job {first}, then with job {job_id}"
            )),
            Some(_) if accepted => {
                self.broken(format!("key {key} was accepted twice (job {job_id})"));
            }
            _ => {
                self.keys.insert(key.to_owned(), job_id);
            }
        }
    }
}

/// Buyer number `n`'s script.
pub async fn buyer(ctx: Rc<Ctx>, n: usize) {
    ctx.pause(0..60_000).await;
    let plan = &ctx.plan;
    let buyer = BuyerId::parse(&format!("buyer-{}", n % plan.distinct_buyers)).unwrap();
    let key = IdempotencyKey::parse(&format!("key-{n}")).unwrap();
    let request = plan.request(&ctx.dice);
    let Some(job_id) = admit(&ctx, &buyer, &key, &request).await else {
        return;
    };
    if ctx.dice.chance(0.3) {
        ctx.ledger.borrow_mut().retries += 1;
        admit(&ctx, &buyer, &key, &request).await;
    }
    if ctx.dice.chance(0.1) {
        reuse_key(&ctx, &buyer, &key, &request).await;
    }
    let Some(mut job) = decision(&ctx, job_id, JobStatus::Pending).await else {
        return;
    };
    if job.status == JobStatus::Waitlisted {
        if ctx.dice.chance(0.3) {
            leave_line(&ctx, job_id).await;
            return;
        }
        let Some(served) = decision(&ctx, job_id, JobStatus::Waitlisted).await else {
            return;
        };
        job = served;
    }
    if job.status != JobStatus::Held {
        return;
    }
    let hold_ms = u64::try_from(plan.event.hold.as_millis()).unwrap_or(60_000);
    let mut until = job.hold_expires_at;
    if ctx.dice.chance(0.3) {
        ctx.pause(0..hold_ms).await;
        if let Some(Settled::Done(extended)) = settle(&ctx, job_id, JobAction::Extend, until).await
        {
            until = extended.hold_expires_at;
        }
    }
    ctx.pause(0..hold_ms * 3 / 2).await;
    let action = match ctx.dice.below(4) {
        0 | 1 => JobAction::Confirm,
        2 => JobAction::Cancel,
        _ => return,
    };
    if action == JobAction::Confirm && ctx.plan.payments && job.is_priced() {
        // Where payments are required, a priced hold is confirmed by its payment.
        pay_for(&ctx, &format!("pay-{n}"), &job, until).await;
        return;
    }
    if let Some(Settled::Done(first)) = settle(&ctx, job_id, action, until).await {
        ctx.ledger.borrow_mut().settled += 1;
        if ctx.dice.chance(0.3) {
            ctx.ledger.borrow_mut().retries += 1;
            if let Some(again) = settle(&ctx, job_id, action, until).await
                && !matches!(&again, Settled::Done(job) if job.status == first.status)
            {
                ctx.ledger.borrow_mut().broken(format!(
                    "{action:?} of job {job_id} was done ({}), then answered {again:?}",
                    first.status.as_str()
                ));
            }
        }
    }
}

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
            buyer.clone(),
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
                Ok(Admission::AlreadyQueued(_)) if ctx.plan.event.sale_starts_at.is_some() => {
                    Some(None)
                }
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

/// The key used again for another request: once the key has a job, that must be refused.
async fn reuse_key(ctx: &Ctx, buyer: &BuyerId, key: &IdempotencyKey, used: &SeatRequest) {
    let mut other = SeatRequest::in_section("A", 3).unwrap();
    if &other == used {
        other = SeatRequest::in_section("A", 4).unwrap();
    }
    for _ in 0..ATTEMPTS {
        let event_id = ctx.plan.event.event_id.clone();
        match app::admit(
            &ctx.backend,
            key,
            event_id,
            buyer.clone(),
            other.clone(),
            false,
        )
        .await
        {
            Ok(Admission::KeyReused) => return,
            Ok(answer) => {
                let what = format!("{} reused for another request: {answer:?}", key.as_str());
                ctx.ledger.borrow_mut().broken(what);
                return;
            }
            Err(_) => ctx.pause(200..3_000).await,
        }
    }
}

/// A buyer who gave up waiting in line cancels: the job ends CANCELLED (its place, or the hold
/// the line served it meanwhile), unless the line served it a hold that lapsed before the
/// cancel came (the buyer never knew its deadline) or closed.
async fn leave_line(ctx: &Ctx, job_id: JobId) {
    if let Some(answer) = answered(ctx, job_id, JobAction::Cancel).await
        && !matches!(&answer, Settled::Done(job) if job.status == JobStatus::Cancelled)
        && !matches!(
            &answer,
            Settled::Conflict(JobConflict::WrongStatus { .. } | JobConflict::HoldLapsed)
        )
    {
        let what = format!("leaving the line of job {job_id} was answered {answer:?}");
        ctx.ledger.borrow_mut().broken(what);
    }
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
