//! The simulated processes, each a loop over the real application code (`seatclaim_core::app`)
//! as the API, the worker and `seatclaimctl` run it: buyers admit, retry, poll and confirm or
//! cancel; workers receive and decide batches; the sweeper expires lapsed holds; the relay
//! publishes the outbox; an operator replays the dead-letter queue; and the queue itself
//! delivers copies of its messages (at-least-once) and now and then a body nobody can read.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use seatclaim_core::Backend;
use seatclaim_core::app::dead_letters::{self, Selection};
use seatclaim_core::app::{self, BatchOutcome, RELAY_PAGE, backoff};
use seatclaim_core::domain::JobId;
use seatclaim_core::memory::{Lane, MemoryStore};

use super::clock::SimClock;
use super::dice::Dice;
use super::gate::Gate;
use super::ledger::Ledger;
use super::report::add_batch;
use super::scheduler::{Sleep, Timers};
use super::world::Plan;

/// What every actor holds: the gated ports, the store behind them (for the queue's own
/// misbehaviour), simulated time, the dice and the buyers' ledger.
pub struct Ctx {
    /// The ports, each call a step behind the gate.
    pub backend: Backend,
    /// The memory store itself.
    pub store: Arc<MemoryStore>,
    /// Simulated time.
    pub clock: Arc<SimClock>,
    /// Where sleeps register their wake-up.
    pub timers: Rc<Timers>,
    /// The run's randomness.
    pub dice: Dice,
    /// The trace.
    pub gate: Arc<Gate>,
    /// The seed's world.
    pub plan: Plan,
    /// What the buyers were told, and what they found wrong.
    pub ledger: RefCell<Ledger>,
    /// How the workers' batches went, summed.
    pub batches: RefCell<BatchOutcome>,
}

impl Ctx {
    /// Parks the actor for `by` of simulated time.
    pub fn sleep(&self, by: Duration) -> Sleep {
        Sleep::new(&self.clock, &self.timers, by)
    }

    /// Parks the actor for a random `range` of milliseconds.
    pub fn pause(&self, range: std::ops::Range<u64>) -> Sleep {
        self.sleep(self.dice.millis(range))
    }
}

/// A worker claim loop as `seatclaim-worker` runs it: the acknowledgements of one batch go with
/// the next receive; or, for `at_once`, `crate::process_batch` acknowledges each batch itself.
pub async fn worker(ctx: Rc<Ctx>, at_once: bool) {
    let mut decided = Vec::new();
    let mut failures = 0;
    loop {
        let done = std::mem::take(&mut decided);
        let received = if at_once {
            ctx.backend
                .queue
                .receive(ctx.plan.batch, Duration::ZERO)
                .await
        } else {
            let queue = &ctx.backend.queue;
            queue
                .acknowledge_and_receive(&done, ctx.plan.batch, Duration::ZERO)
                .await
        };
        match received {
            Ok(deliveries) if deliveries.is_empty() => {
                failures = 0;
                ctx.pause(200..3_000).await;
            }
            Ok(deliveries) if at_once => {
                failures = 0;
                let outcome = crate::process_batch(&ctx.backend, deliveries, ctx.plan.limits).await;
                add_batch(&mut ctx.batches.borrow_mut(), &outcome);
            }
            Ok(deliveries) => {
                failures = 0;
                let (outcome, receipts) =
                    app::decide_batch(&ctx.backend, deliveries, ctx.plan.limits).await;
                decided = receipts;
                add_batch(&mut ctx.batches.borrow_mut(), &outcome);
            }
            Err(_) => {
                failures += 1;
                ctx.sleep(backoff::delay_after(failures)).await;
            }
        }
    }
}

/// The worker's sweeper: `app::sweep_once` every few seconds.
pub async fn sweeper(ctx: Rc<Ctx>) {
    loop {
        // The pass reads its instant after this one: a pass that ends well saw no earlier.
        let started = ctx.backend.clock.now();
        if app::sweep_once(&ctx.backend).await.is_ok() {
            ctx.ledger.borrow_mut().swept_at = Some(started);
        }
        ctx.pause(1_000..15_000).await;
    }
}

/// The worker's relay: `app::relay_once` round after round, pausing when the outbox is drained.
pub async fn relay(ctx: Rc<Ctx>) {
    loop {
        match app::relay_once(&ctx.backend).await {
            Ok(published) if published >= RELAY_PAGE => {}
            Ok(_) => ctx.pause(500..5_000).await,
            Err(_) => ctx.pause(1_000..10_000).await,
        }
    }
}

/// An operator at `seatclaimctl dlq replay`: now and then every dead letter, or some jobs' (as
/// listed), sometimes dry, sometimes twice in a row (a replay must be idempotent); and, once in
/// a while, at `seatclaimctl events close-waitlist` in the middle of the sale.
pub async fn operator(ctx: Rc<Ctx>) {
    loop {
        ctx.pause(20_000..240_000).await;
        if ctx.dice.chance(0.1) {
            // Now and then the waitlist is closed while the line is being served.
            let closed = ctx
                .backend
                .inventory
                .close_waitlist(&ctx.plan.event.event_id)
                .await;
            ctx.gate
                .log(|| format!("close waitlist mid-sale: {closed:?}"));
            continue;
        }
        let selection = if ctx.dice.chance(0.5) {
            Selection::All
        } else {
            match dead_letters::list(&ctx.backend).await {
                Ok(views) => {
                    let jobs: Vec<JobId> = views
                        .iter()
                        .filter_map(|view| view.letter.job_id)
                        .filter(|_| ctx.dice.chance(0.5))
                        .collect();
                    Selection::Jobs(jobs)
                }
                Err(_) => continue,
            }
        };
        let dry_run = ctx.dice.chance(0.2);
        let times = if ctx.dice.chance(0.3) { 2 } else { 1 };
        for _ in 0..times {
            let replayed = dead_letters::replay(&ctx.backend, &selection, dry_run).await;
            ctx.gate
                .log(|| format!("replay {selection:?} dry={dry_run}: {replayed:?}"));
            ctx.ledger.borrow_mut().replays += 1;
        }
    }
}

/// The operator's replay of every dead letter at the end of a run, retried until it succeeds.
pub async fn final_replay(ctx: Rc<Ctx>) {
    loop {
        let replayed = dead_letters::replay(&ctx.backend, &Selection::All, false).await;
        ctx.gate.log(|| format!("final replay: {replayed:?}"));
        if replayed.is_ok() {
            return;
        }
        ctx.pause(1_000..5_000).await;
    }
}

/// The operator closes the event's waitlist at the end of a run (every job still in line ends
/// REJECTED), retried until it succeeds.
pub async fn close_waitlist(ctx: Rc<Ctx>) {
    let event_id = ctx.plan.event.event_id.clone();
    loop {
        let closed = ctx.backend.inventory.close_waitlist(&event_id).await;
        ctx.gate.log(|| format!("close waitlist: {closed:?}"));
        if closed.is_ok() {
            return;
        }
        ctx.pause(1_000..5_000).await;
    }
}

/// The queue's own misbehaviour: at-least-once delivery sends copies of messages already in
/// it (with their job id), and now and then a copy whose body was mangled on the way.
pub async fn duplicator(ctx: Rc<Ctx>, every: Duration) {
    loop {
        ctx.sleep(every.mul_f64(ctx.dice.rate(0.2, 1.8))).await;
        let messages: Vec<(String, Option<JobId>)> = ctx.store.inspect(|state| {
            state
                .queue()
                .messages()
                .filter(|(_, m)| m.lane == Lane::Main)
                .map(|(_, m)| (m.body.clone(), m.job_id))
                .collect()
        });
        let Some((body, job_id)) = ctx.dice.pick(&messages).cloned() else {
            continue;
        };
        let mangled = ctx.dice.chance(0.05);
        let body = if mangled {
            body[..body.len() / 2].to_owned()
        } else {
            body
        };
        ctx.gate
            .log(|| format!("queue duplicates a message of {job_id:?} (mangled: {mangled})"));
        ctx.store.send_raw(&body, job_id);
        ctx.ledger.borrow_mut().duplicates += 1;
    }
}
