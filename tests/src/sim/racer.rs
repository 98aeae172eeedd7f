//! The racers: one buyer's hold cancelled, extended and paid for at once, by three actors the
//! scheduler interleaves in every order (a buyer with three tabs open, a provider's webhook
//! arriving mid-cancel). The lead holds a seat and names the instant; the three act at it. A
//! cancel and a payment may not both succeed: the job ends one way, and the store's invariants
//! hold the seats and the sale to it.

use std::cell::RefCell;
use std::rc::Rc;

use jiff::Timestamp;
use seatclaim_core::app::payments::PaymentOutcome;
use seatclaim_core::domain::{BuyerId, IdempotencyKey, Job, JobAction, JobStatus};
use seatclaim_core::ports::{Clock, Settled};

use super::actors::Ctx;
use super::calls::{admit, decision, settle};
use super::clock::signed;
use super::payer::pay;

/// What one race shares between its actors.
#[derive(Debug, Default)]
pub struct Race {
    /// The held job, and when the three act on it.
    held: Option<(Job, Timestamp)>,
    /// The lead gave up (no hold): the three go home.
    off: bool,
    /// Whether the cancel was answered done.
    cancelled: bool,
    /// Whether the payment (or the confirm, where payments are waived) sold the job.
    sold: bool,
}

/// One of the three racing moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// Cancel the hold.
    Cancel,
    /// Extend it.
    Extend,
    /// Pay for it (confirm it, where payments are waived or it is free).
    Pay,
}

/// The lead of race `n`: admits a request, waits for its hold and names the instant.
pub async fn lead(ctx: Rc<Ctx>, n: usize, race: Rc<RefCell<Race>>) {
    ctx.pause(0..60_000).await;
    let buyer = BuyerId::parse(&format!("racer-{n}")).unwrap();
    let key = IdempotencyKey::parse(&format!("racer-key-{n}")).unwrap();
    let request = ctx.plan.request(&ctx.dice);
    let held = match admit(&ctx, &buyer, &key, &request).await {
        Some(job_id) => decision(&ctx, job_id, JobStatus::Pending).await,
        None => None,
    };
    let mut race = race.borrow_mut();
    match held.filter(|job| job.status == JobStatus::Held) {
        Some(job) => {
            let at = ctx.clock.now() + signed(ctx.dice.millis(0..3_000));
            race.held = Some((job, at));
            ctx.ledger.borrow_mut().adversaries.races += 1;
        }
        None => race.off = true,
    }
}

/// One racer: waits for the lead's hold, then at its instant makes `what`.
pub async fn racer(ctx: Rc<Ctx>, n: usize, what: Move, race: Rc<RefCell<Race>>) {
    let (job, at) = loop {
        let found = {
            let race = race.borrow();
            if race.off {
                return;
            }
            race.held.clone()
        };
        match found {
            Some(held) => break held,
            None => ctx.pause(500..3_000).await,
        }
    };
    let wait = at.duration_since(ctx.clock.now()).unsigned_abs();
    if at > ctx.clock.now() {
        ctx.sleep(wait).await;
    }
    let (id, until) = (job.job_id, job.hold_expires_at);
    let done = match what {
        Move::Cancel => matches!(
            settle(&ctx, id, JobAction::Cancel, until).await,
            Some(Settled::Done(_))
        ),
        Move::Extend => {
            settle(&ctx, id, JobAction::Extend, until).await;
            false
        }
        Move::Pay => match job.amount_due.filter(|_| ctx.plan.payments) {
            Some(due) => {
                let paid = pay(&ctx, Some(id), &format!("race-{n}"), due).await;
                paid == Some(PaymentOutcome::Paid(id))
            }
            None => matches!(
                settle(&ctx, id, JobAction::Confirm, until).await,
                Some(Settled::Done(_))
            ),
        },
    };
    let mut race = race.borrow_mut();
    match what {
        Move::Cancel => race.cancelled |= done,
        Move::Pay => race.sold |= done,
        Move::Extend => {}
    }
    if race.cancelled && race.sold {
        let what = format!("job {id} was both cancelled and sold by a racing cancel and payment");
        ctx.ledger.borrow_mut().broken(what);
    }
}
