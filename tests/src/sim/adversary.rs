//! The adversaries (docs/simulation.md): buyers who break the rules the honest ones keep, to
//! show the store refuses them. The confirmer confirms at every step of its job's life (PENDING,
//! in line, HELD, after its hold lapsed, after it cancelled), bringing no payment where payments
//! are required; the unservable buyer asks for more than its section can ever give. The payer is
//! in `payer.rs`, the racers who cancel, extend and pay at once in `racer.rs`.

use std::rc::Rc;

use seatclaim_core::app;
use seatclaim_core::domain::{
    BuyerId, IdempotencyKey, Job, JobAction, JobConflict, JobStatus, SeatRequest,
};
use seatclaim_core::ports::{Admission, Settled};

use super::actors::Ctx;
use super::calls::{ATTEMPTS, admit, answered};

/// Confirms the confirmer fires at most, one a round.
const ROUNDS: usize = 24;

/// The confirmer `n`: admits a request, then, round after round, reads its job and confirms it
/// whatever it is, now and then cancelling a hold, until a confirm came after its job ended.
pub async fn confirmer(ctx: Rc<Ctx>, n: usize) {
    ctx.pause(0..60_000).await;
    let buyer = BuyerId::parse(&format!("confirmer-{n}")).unwrap();
    let key = IdempotencyKey::parse(&format!("confirmer-key-{n}")).unwrap();
    let request = ctx.plan.request(&ctx.dice);
    let Some(job_id) = admit(&ctx, &buyer, &key, &request).await else {
        return;
    };
    let hold_ms = u64::try_from(ctx.plan.event.hold.as_millis()).unwrap_or(60_000);
    let mut ended = false;
    for _ in 0..ROUNDS {
        ctx.pause(0..hold_ms / 3).await;
        let Ok(Some(job)) = app::jobs::job(&ctx.backend, job_id).await else {
            continue;
        };
        let action = if job.status == JobStatus::Held && ctx.dice.chance(0.1) {
            JobAction::Cancel
        } else {
            JobAction::Confirm
        };
        let Some(answer) = answered(&ctx, job_id, action).await else {
            continue;
        };
        if action == JobAction::Confirm {
            check_confirm(&ctx, &job, &answer);
        }
        if ended {
            return;
        }
        ended = matches!(
            job.status,
            JobStatus::Sold | JobStatus::Expired | JobStatus::Cancelled | JobStatus::Rejected
        );
    }
}

/// A confirm without a payment never sells a priced hold where payments are required, is
/// refused for the hold's own amount due, and a payment it never brought is never its answer.
fn check_confirm(ctx: &Ctx, seen: &Job, answer: &Settled) {
    let mut ledger = ctx.ledger.borrow_mut();
    ledger.adversaries.confirms += 1;
    let fine = match answer {
        Settled::Done(job) if job.status == JobStatus::Sold => {
            !(ctx.plan.payments && job.is_priced()) || job.payment_ref.is_some()
        }
        Settled::Done(_) => false,
        Settled::Conflict(JobConflict::PaymentRequired { due }) => {
            ledger.adversaries.unpaid_refused += 1;
            ctx.plan.payments && seen.amount_due.is_none_or(|d| d == *due)
        }
        Settled::Conflict(JobConflict::PaymentMismatch { .. } | JobConflict::PaidOtherwise)
        | Settled::NotFound => false,
        Settled::Conflict(_) => true,
    };
    if !fine {
        ledger.broken(format!(
            "a confirm without payment of job {} ({}) was answered {answer:?}",
            seen.job_id,
            seen.status.as_str()
        ));
    }
}

/// The unservable buyer `n`: asks for more than its section can ever give, which admission must
/// refuse as such (never accepted, never put in a line it would never leave).
pub async fn unservable(ctx: Rc<Ctx>, n: usize) {
    ctx.pause(0..60_000).await;
    let buyer = BuyerId::parse(&format!("greedy-{n}")).unwrap();
    let key = IdempotencyKey::parse(&format!("greedy-key-{n}")).unwrap();
    let request: SeatRequest = ctx.plan.unservable(&ctx.dice);
    for _ in 0..ATTEMPTS {
        let event_id = ctx.plan.event.event_id.clone();
        let answer = app::admit(
            &ctx.backend,
            &key,
            event_id,
            (buyer.clone(), None),
            request.clone(),
            false,
        )
        .await;
        ctx.gate.log(|| format!("{buyer} {request:?}: {answer:?}"));
        let mut ledger = ctx.ledger.borrow_mut();
        match answer {
            Ok(Admission::Unservable(_)) => {
                ledger.adversaries.unservable += 1;
                return;
            }
            Ok(other) => {
                ledger.broken(format!(
                    "{request:?}, never servable, was answered {other:?}"
                ));
                return;
            }
            Err(_) => {}
        }
        drop(ledger);
        ctx.pause(200..3_000).await;
    }
}
