//! The ports the simulated processes are given: each call of the memory backend's ports goes
//! through the [`Gate`], so it is one step of the schedule and may fail before or after it
//! commits. The queue also hands its deliveries over in an order the seed chooses, and fewer of
//! them than asked for; the bus may refuse part of a publication.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;
use seatclaim_core::Backend;
use seatclaim_core::domain::{
    BuyerId, Closure, EventId, IdempotencyKey, Intent, Job, JobAction, JobId, Line, Notice,
    ReservationEvent, Tender,
};
use seatclaim_core::ports::{
    Admission, Admissions, BackendError, Claims, DeadLetter, Delivery, EventPublisher, IntentQueue,
    Inventory, Jobs, Outbox, OutboxEntry, QueueDepth, Receipt, Settled,
};

use super::gate::{Fault, Gate, Part};

/// A port behind the gate.
pub struct Gated<T: ?Sized> {
    inner: Arc<T>,
    gate: Arc<Gate>,
}

fn gated<T: ?Sized>(inner: &Arc<T>, gate: &Arc<Gate>) -> Arc<Gated<T>> {
    Arc::new(Gated {
        inner: Arc::clone(inner),
        gate: Arc::clone(gate),
    })
}

/// `backend` with every port but the catalog and the clock behind `gate`.
pub fn gate_ports(backend: &Backend, gate: &Arc<Gate>) -> Backend {
    Backend {
        catalog: Arc::clone(&backend.catalog),
        admissions: gated(&backend.admissions, gate),
        jobs: gated(&backend.jobs, gate),
        inventory: gated(&backend.inventory, gate),
        outbox: gated(&backend.outbox, gate),
        queue: gated(&backend.queue, gate),
        publisher: gated(&backend.publisher, gate),
        clock: Arc::clone(&backend.clock),
    }
}

#[async_trait]
impl Admissions for Gated<dyn Admissions> {
    async fn admit(
        &self,
        key: &IdempotencyKey,
        intent: &Intent,
    ) -> Result<Admission, BackendError> {
        let work = self.inner.admit(key, intent);
        self.gate.call("admissions.admit", Part::Store, work).await
    }

    fn new_job_id(&self, buyer: &BuyerId, key: &IdempotencyKey) -> JobId {
        self.inner.new_job_id(buyer, key)
    }
}

#[async_trait]
impl Jobs for Gated<dyn Jobs> {
    async fn job(&self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        let work = self.inner.job(job_id);
        self.gate.call("jobs.job", Part::Read, work).await
    }

    async fn line(&self, job: &Job) -> Result<Line, BackendError> {
        let work = self.inner.line(job);
        self.gate.call("jobs.line", Part::Read, work).await
    }

    async fn waitlist_position(&self, job: &Job) -> Result<Option<u64>, BackendError> {
        let work = self.inner.waitlist_position(job);
        self.gate
            .call("jobs.waitlist_position", Part::Read, work)
            .await
    }

    async fn sold_by_payment(&self, reference: &str) -> Result<Option<JobId>, BackendError> {
        let work = self.inner.sold_by_payment(reference);
        self.gate
            .call("jobs.sold_by_payment", Part::Read, work)
            .await
    }

    async fn close(
        &self,
        job_id: JobId,
        closure: &Closure,
        now: Timestamp,
    ) -> Result<bool, BackendError> {
        let work = self.inner.close(job_id, closure, now);
        self.gate.call("jobs.close", Part::Store, work).await
    }

    async fn note_failure(&self, job_id: JobId, error: &str) -> Result<(), BackendError> {
        let work = self.inner.note_failure(job_id, error);
        self.gate.call("jobs.note_failure", Part::Store, work).await
    }

    async fn reopen(&self, job_id: JobId, now: Timestamp) -> Result<bool, BackendError> {
        let work = self.inner.reopen(job_id, now);
        self.gate.call("jobs.reopen", Part::Store, work).await
    }

    async fn history(&self, job_id: JobId) -> Result<Vec<ReservationEvent>, BackendError> {
        let work = self.inner.history(job_id);
        self.gate.call("jobs.history", Part::Read, work).await
    }

    async fn of_event(&self, event_id: &EventId) -> Result<Vec<Job>, BackendError> {
        let work = self.inner.of_event(event_id);
        self.gate.call("jobs.of_event", Part::Read, work).await
    }
}

#[async_trait]
impl Inventory for Gated<dyn Inventory> {
    async fn claim(&self, intents: &[Intent], now: Timestamp) -> Result<Claims, BackendError> {
        let work = self.inner.claim(intents, now);
        self.gate.call("inventory.claim", Part::Store, work).await
    }

    async fn settle(
        &self,
        job_id: JobId,
        action: JobAction,
        tender: &Tender,
    ) -> Result<Settled, BackendError> {
        let work = self.inner.settle(job_id, action, tender);
        self.gate.call("inventory.settle", Part::Store, work).await
    }

    async fn release_lapsed_holds(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError> {
        let work = self.inner.release_lapsed_holds(now, limit);
        self.gate
            .call("inventory.release_lapsed", Part::Store, work)
            .await
    }

    async fn close_waitlist(&self, event_id: &EventId) -> Result<Option<usize>, BackendError> {
        let work = self.inner.close_waitlist(event_id);
        self.gate
            .call("inventory.close_waitlist", Part::Store, work)
            .await
    }
}

#[async_trait]
impl Outbox for Gated<dyn Outbox> {
    fn short_page_drains(&self) -> bool {
        self.inner.short_page_drains()
    }

    async fn unpublished(&self, limit: usize) -> Result<Vec<OutboxEntry>, BackendError> {
        let work = self.inner.unpublished(limit);
        self.gate.call("outbox.unpublished", Part::Read, work).await
    }

    async fn mark_published(&self, entries: &[OutboxEntry]) -> Result<(), BackendError> {
        let work = self.inner.mark_published(entries);
        self.gate
            .call("outbox.mark_published", Part::Store, work)
            .await
    }

    async fn record(
        &self,
        events: &[ReservationEvent],
        refused: &[usize],
    ) -> Result<(), BackendError> {
        let work = self.inner.record(events, refused);
        self.gate.call("outbox.record", Part::Store, work).await
    }

    async fn oldest_unpublished(&self) -> Result<Option<Timestamp>, BackendError> {
        let work = self.inner.oldest_unpublished();
        self.gate.call("outbox.oldest", Part::Read, work).await
    }
}

impl Gated<dyn IntentQueue> {
    /// Fewer than `max` at times, as SQS returns, and in an order the seed chooses.
    fn fewer(&self, max: usize) -> usize {
        if max > 1 && self.gate.dice().chance(0.3) {
            1 + self.gate.dice().below(max)
        } else {
            max
        }
    }

    fn reorder(&self, mut deliveries: Vec<Delivery>) -> Vec<Delivery> {
        self.gate.dice().shuffle(&mut deliveries);
        deliveries
    }
}

#[async_trait]
impl IntentQueue for Gated<dyn IntentQueue> {
    async fn send(&self, intents: &[Intent]) -> Result<(), BackendError> {
        let work = self.inner.send(intents);
        self.gate.call("queue.send", Part::Queue, work).await
    }

    async fn receive(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, BackendError> {
        let work = self.inner.receive(self.fewer(max), wait);
        let got = self.gate.call("queue.receive", Part::Queue, work).await?;
        Ok(self.reorder(got))
    }

    async fn acknowledge_and_receive(
        &self,
        done: &[Receipt],
        max: usize,
        wait: Duration,
    ) -> Result<Vec<Delivery>, BackendError> {
        let work = self
            .inner
            .acknowledge_and_receive(done, self.fewer(max), wait);
        // Named apart from a bare receive: parked here, a worker has decided intents to acknowledge.
        let name = if done.is_empty() {
            "queue.receive"
        } else {
            "queue.ack_and_receive"
        };
        let got = self.gate.call(name, Part::Queue, work).await?;
        Ok(self.reorder(got))
    }

    async fn delete(&self, receipts: &[Receipt]) -> Result<(), BackendError> {
        let work = self.inner.delete(receipts);
        self.gate.call("queue.delete", Part::Queue, work).await
    }

    async fn retry_after(&self, receipt: &Receipt, delay: Duration) -> Result<(), BackendError> {
        let work = self.inner.retry_after(receipt, delay);
        self.gate.call("queue.retry_after", Part::Queue, work).await
    }

    async fn extend_visibility(
        &self,
        receipts: &[Receipt],
        by: Duration,
    ) -> Result<(), BackendError> {
        let work = self.inner.extend_visibility(receipts, by);
        self.gate
            .call("queue.extend_visibility", Part::Queue, work)
            .await
    }

    async fn dead_letter(&self, delivery: &Delivery, reason: &str) -> Result<(), BackendError> {
        let work = self.inner.dead_letter(delivery, reason);
        self.gate.call("queue.dead_letter", Part::Queue, work).await
    }

    async fn dead_letters(
        &self,
        limit: usize,
        hold: Duration,
    ) -> Result<Vec<DeadLetter>, BackendError> {
        let work = self.inner.dead_letters(limit, hold);
        self.gate
            .call("queue.dead_letters", Part::Queue, work)
            .await
    }

    async fn redrive(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        let work = self.inner.redrive(letters);
        self.gate.call("queue.redrive", Part::Queue, work).await
    }

    async fn release(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        let work = self.inner.release(letters);
        self.gate.call("queue.release", Part::Queue, work).await
    }

    async fn purge(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        let work = self.inner.purge(letters);
        self.gate.call("queue.purge", Part::Queue, work).await
    }

    async fn depth(&self) -> Result<QueueDepth, BackendError> {
        let work = self.inner.depth();
        self.gate.call("queue.depth", Part::Queue, work).await
    }
}

/// The bus may also take part of a publication and refuse the rest, which the relay then
/// retries alone.
#[async_trait]
impl EventPublisher for Gated<dyn EventPublisher> {
    async fn publish(&self, events: &[ReservationEvent]) -> Result<Vec<usize>, BackendError> {
        let refused: Vec<usize> = if self.gate.roll(Part::Bus) == Fault::None {
            Vec::new()
        } else {
            (0..events.len())
                .filter(|_| self.gate.dice().chance(0.5))
                .collect()
        };
        let taken: Vec<ReservationEvent> = events
            .iter()
            .enumerate()
            .filter(|(i, _)| !refused.contains(i))
            .map(|(_, event)| event.clone())
            .collect();
        let work = self.inner.publish(&taken);
        self.gate.call("bus.publish", Part::Bus, work).await?;
        if !refused.is_empty() {
            self.gate
                .log(|| format!("the bus refused the events at {refused:?}"));
        }
        Ok(refused)
    }

    async fn publish_notice(&self, notice: &Notice) -> Result<(), BackendError> {
        let work = self.inner.publish_notice(notice);
        self.gate.call("bus.publish_notice", Part::Bus, work).await
    }
}
