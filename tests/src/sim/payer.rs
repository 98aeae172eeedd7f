//! Payments, as a provider reports them (`app::payments::record_payment`, what the webhook
//! calls): the honest buyer's payment of its hold's amount due, and the adversarial payer, who
//! pays wrong amounts, the right amount twice (under the same reference and under another) and
//! a payment again naming no job. Every payment goes into the ledger before it is reported (the
//! provider took the money whatever the answer), so invariant 10 can hold each sale to it.

use std::rc::Rc;

use jiff::Timestamp;
use seatclaim_core::app::payments::{PaymentOutcome, PaymentReport, record_payment};
use seatclaim_core::domain::{
    BuyerId, Currency, IdempotencyKey, Job, JobId, JobStatus, Money, Payment, SeatRequest,
};
use seatclaim_core::ports::Clock;

use super::actors::Ctx;
use super::calls::{ATTEMPTS, admit, decision};

/// Reports `paid` under `reference` for `job_id` until the app answers (a provider retries its
/// webhook with the same event); `None` if it never did.
pub(super) async fn pay(
    ctx: &Ctx,
    job_id: Option<JobId>,
    reference: &str,
    paid: Money,
) -> Option<PaymentOutcome> {
    let payment = Payment {
        paid,
        reference: reference.to_owned(),
    };
    ctx.ledger
        .borrow_mut()
        .payments
        .insert(reference.to_owned(), paid);
    for attempt in 0..ATTEMPTS {
        let report = PaymentReport {
            provider_event_id: format!("evt-{reference}-{attempt}"),
            job_id,
            payment: Ok(payment.clone()),
            refused: None,
        };
        let answer = record_payment(&ctx.backend, report).await;
        ctx.gate
            .log(|| format!("payment {reference} of {paid} for {job_id:?}: {answer:?}"));
        match answer {
            Ok(outcome) => return Some(outcome),
            Err(_) => ctx.pause(200..3_000).await,
        }
    }
    None
}

/// The honest buyer pays its hold's amount due under `reference`: it sells the job, unless the
/// hold (`until`) lapsed first; sometimes the provider reports it again, which must name the
/// same job.
pub(super) async fn pay_for(ctx: &Ctx, reference: &str, job: &Job, until: Option<Timestamp>) {
    let Some(due) = job.amount_due else {
        return;
    };
    let first = pay(ctx, Some(job.job_id), reference, due).await;
    let lapsed = until.is_none_or(|until| until <= ctx.clock.now());
    let sold = match &first {
        Some(PaymentOutcome::Paid(id)) if *id == job.job_id => true,
        Some(PaymentOutcome::Unmatched(_)) if lapsed => false,
        None => false,
        Some(other) => {
            let what = format!("the payment of job {} was answered {other:?}", job.job_id);
            ctx.ledger.borrow_mut().broken(what);
            false
        }
    };
    if sold && ctx.dice.chance(0.3) {
        expect_paid(ctx, Some(job.job_id), reference, due, job.job_id).await;
    }
}

/// Reports a payment that already sold `sold` again: it is that job's, whatever it names.
async fn expect_paid(ctx: &Ctx, job_id: Option<JobId>, reference: &str, paid: Money, sold: JobId) {
    let again = pay(ctx, job_id, reference, paid).await;
    if again
        .as_ref()
        .is_some_and(|o| *o != PaymentOutcome::Paid(sold))
    {
        let what =
            format!("payment {reference}, which sold job {sold}, was then answered {again:?}");
        ctx.ledger.borrow_mut().broken(what);
    }
}

/// Reports a payment that must sell nothing (`why`): it must come back unmatched.
async fn expect_unmatched(ctx: &Ctx, job_id: JobId, reference: &str, paid: Money, why: &str) {
    let answer = pay(ctx, Some(job_id), reference, paid).await;
    if let Some(PaymentOutcome::Paid(sold)) = answer {
        let what = format!("{why} (payment {reference} of {paid}) sold job {sold}");
        ctx.ledger.borrow_mut().broken(what);
    }
}

/// The adversarial payer `n`: holds a seat of a priced section (where there is one), then pays
/// a wrong amount or currency, the right amount, the same payment again (naming its job, or no
/// job) and another payment of the right amount, in an order the seed chooses.
pub async fn payer(ctx: Rc<Ctx>, n: usize) {
    ctx.pause(0..60_000).await;
    let prices = &ctx.plan.event.prices.sections;
    let section = prices.keys().next().map_or("A", |s| s.as_str()).to_owned();
    let buyer = BuyerId::parse(&format!("payer-{n}")).unwrap();
    let key = IdempotencyKey::parse(&format!("payer-key-{n}")).unwrap();
    let request = SeatRequest::in_section(&section, 1).unwrap();
    let Some(job_id) = admit(&ctx, &buyer, &key, &request).await else {
        return;
    };
    let mut job = decision(&ctx, job_id, JobStatus::Pending).await;
    if job
        .as_ref()
        .is_some_and(|j| j.status == JobStatus::Waitlisted)
    {
        job = decision(&ctx, job_id, JobStatus::Waitlisted).await;
    }
    let Some(job) = job.filter(|j| j.status == JobStatus::Held) else {
        return;
    };
    ctx.ledger.borrow_mut().adversaries.payers += 1;
    let usd = Currency::parse("USD").unwrap();
    let due = job.amount_due.unwrap_or(Money {
        amount: 100,
        currency: usd,
    });
    let wrong = Money {
        amount: if ctx.dice.chance(0.5) {
            due.amount + 1
        } else {
            due.amount.saturating_sub(1)
        },
        ..due
    };
    if ctx.dice.chance(0.5) {
        let why = "a payment of the wrong amount";
        expect_unmatched(&ctx, job_id, &format!("wrong-{n}"), wrong, why).await;
    }
    if ctx.dice.chance(0.3) {
        let other = Money {
            currency: usd,
            ..due
        };
        let why = "a payment in another currency";
        expect_unmatched(&ctx, job_id, &format!("usd-{n}"), other, why).await;
    }
    ctx.pause(0..2_000).await;
    let first = pay(&ctx, Some(job_id), &format!("right-{n}"), due).await;
    if first != Some(PaymentOutcome::Paid(job_id)) {
        return;
    }
    for _ in 0..ctx.dice.below(3) + 1 {
        ctx.pause(0..5_000).await;
        match ctx.dice.below(3) {
            0 => expect_paid(&ctx, Some(job_id), &format!("right-{n}"), due, job_id).await,
            1 => expect_paid(&ctx, None, &format!("right-{n}"), due, job_id).await,
            _ => {
                let why = "a second payment of a sold job";
                expect_unmatched(&ctx, job_id, &format!("again-{n}"), due, why).await;
            }
        }
    }
}
