//! A buyer, as a client of the API: admits a reservation under a key of its own (retrying on
//! failure with the same key and body, as the HTTP contract tells clients to), sometimes retries
//! a success or reuses the key for another request, polls its job, sometimes extends the hold,
//! and confirms, cancels or lets the hold lapse, retrying the settle too. Every answer is checked against what the buyer was
//! told before: a retry must name the same job, a repeated settle must change nothing.

use std::rc::Rc;

use seatclaim_core::app;
use seatclaim_core::domain::{
    BuyerId, IdempotencyKey, JobAction, JobConflict, JobId, JobStatus, SeatRequest,
};
use seatclaim_core::ports::{Admission, Settled};

use super::actors::Ctx;
use super::calls::{ATTEMPTS, admit, answered, decision, settle};
use super::payer::pay_for;

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
            (buyer.clone(), None),
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
