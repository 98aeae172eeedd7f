//! A sale found by its payment: the reference a sale's payment records names its SOLD job on
//! every backend, at once after the sale, so a provider's second report of the payment (naming
//! no job) is known paid instead of being published for a refund.

use crate::domain::{
    Currency, EventSpec, JobAction, JobStatus, Money, NewEvent, Payment, SectionSpec, Tender,
};
use crate::ports::{EventCreation, Settled};

use super::{Fixture, HOLD_SECONDS, admitted, claim, exact};

/// A payment of `amount` euro cents under `reference`.
fn paid(amount: u64, reference: &str) -> Tender {
    Tender::Paid(Payment {
        paid: Money {
            amount,
            currency: Currency::parse("EUR").unwrap(),
        },
        reference: reference.to_owned(),
    })
}

/// A sale is found by its payment's reference, and only a sale: a refused payment, a held
/// job and an unknown reference name no job; a second report of the payment changes nothing.
pub async fn a_sale_is_found_by_its_payment(f: Fixture) {
    let event = NewEvent::parse(EventSpec {
        event_id: "priced".into(),
        name: "contract".into(),
        hold_seconds: Some(HOLD_SECONDS),
        currency: Some("EUR".into()),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "A".into(),
            rows: 1,
            seats_per_row: 3,
            price: Some(1500),
        }]),
        ..EventSpec::default()
    })
    .unwrap();
    assert_eq!(
        f.backend.catalog.create_event(&event).await.unwrap(),
        EventCreation::Created(3)
    );
    let event = event.event_id;
    let sold = admitted(&f, &event, "b1", exact(&["A-1-1"])).await;
    let held = admitted(&f, &event, "b2", exact(&["A-1-2"])).await;
    claim(&f, &sold).await;
    claim(&f, &held).await;
    let (backend, jobs) = (&f.backend, &f.backend.jobs);
    let settle = |job_id, tender: Tender| async move {
        backend
            .inventory
            .settle(job_id, JobAction::Confirm, &tender)
            .await
            .unwrap()
    };

    let short = settle(held.job_id, paid(1, "pi_short")).await;
    assert!(matches!(short, Settled::Conflict(_)), "{short:?}");
    assert_eq!(jobs.sold_by_payment("pi_short").await.unwrap(), None);
    assert_eq!(jobs.sold_by_payment("pi_sale").await.unwrap(), None);

    let done = settle(sold.job_id, paid(1500, "pi_sale")).await;
    assert!(matches!(&done, Settled::Done(job) if job.status == JobStatus::Sold));
    assert_eq!(
        jobs.sold_by_payment("pi_sale").await.unwrap(),
        Some(sold.job_id)
    );
    let again = settle(sold.job_id, paid(1500, "pi_sale")).await;
    assert!(matches!(again, Settled::Done(_)), "{again:?}");
    assert_eq!(
        jobs.sold_by_payment("pi_sale").await.unwrap(),
        Some(sold.job_id)
    );
    for unknown in ["pi_other", "pi_sal", "", "payment#pi_sale"] {
        assert_eq!(
            jobs.sold_by_payment(unknown).await.unwrap(),
            None,
            "{unknown}"
        );
    }
    assert_eq!(
        jobs.job(held.job_id).await.unwrap().unwrap().status,
        JobStatus::Held
    );
}
