//! Admission on DynamoDB: the job item is also its idempotency key's record. A job's id is named
//! by the buyer and key ([`JobId::for_key`]), so admitting a new key is one conditional
//! `PutItem` of the PENDING job with the request's fingerprint, and a retry finds that same item.
//! Keys recorded by schema version 2 (a separate table) were copied by `seatclaimctl migrate`
//! as alias items: the key's job id holding `alias_of`, the job it named.

use async_trait::async_trait;

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, Transacted, get_s, n, opt_s, put_new, s, transact};
use crate::jobs::records::{job_item, job_key};
use crate::opening::prequeue::{List, Parked};
use seatclaim_core::domain::{BuyerId, IdempotencyKey, Intent, Job, JobId, JobStatus, SeatRequest};
use seatclaim_core::ports::{Admission, Admissions, BackendError, IntentQueue, SectionKnown};

impl DynamoStore {
    /// The request fingerprint and job of a key used before, from its job item or its alias.
    async fn find_key(&self, key_job: JobId) -> Result<Option<(String, JobId)>, BackendError> {
        let output = self
            .db
            .get_item()
            .table_name(&self.names.jobs_table)
            .set_key(Some(job_key(key_job)))
            .consistent_read(true)
            .projection_expression("fingerprint, alias_of")
            .send()
            .await
            .map_err(|e| classify("GetItem job by key", e))?;
        let Some(item) = output.item() else {
            return Ok(None);
        };
        let job_id = match opt_s(item, "alias_of") {
            Some(alias) => JobId::parse(alias)
                .ok_or_else(|| BackendError::permanent("an alias names an invalid job"))?,
            None => key_job,
        };
        Ok(Some((get_s(item, "fingerprint")?.to_owned(), job_id)))
    }

    /// Refuses requests for an event, seats or section that do not exist.
    async fn check_request(&self, intent: &Intent) -> Result<Option<Admission>, BackendError> {
        let Some(meta) = self.event_meta(&intent.event_id).await? else {
            return Ok(Some(Admission::UnknownEvent));
        };
        let (found, section) = match &intent.request {
            SeatRequest::Section { section, .. } => {
                let name = section.as_str();
                let known = meta.sections.iter().any(|s| s == name);
                let capacity = meta.capacities.get(name).copied();
                let section = if known {
                    SectionKnown::Yes(capacity)
                } else {
                    SectionKnown::No
                };
                (Vec::new(), section)
            }
            SeatRequest::Seats(wanted) => {
                let known = meta
                    .seat_ids
                    .get_or_try_init(|| self.seat_ids(&intent.event_id, meta.seat_count))
                    .await?;
                let found = wanted
                    .iter()
                    .filter(|id| known.contains(*id))
                    .cloned()
                    .collect();
                (found, SectionKnown::No)
            }
        };
        Ok(Admission::refusal(&intent.request, &found, section))
    }

    /// The answer for a key used before, if it was: the earlier job (its intent sent again while
    /// undecided), or the refusal of a key reused for another request.
    async fn earlier(&self, intent: &Intent) -> Result<Option<Admission>, BackendError> {
        let Some((earlier, job_id)) = self.find_key(intent.job_id).await? else {
            return Ok(None);
        };
        let answer = Admission::for_earlier(&earlier, intent, job_id);
        if answer == Admission::Duplicate(job_id) {
            self.resend_if_pending(job_id).await?;
        }
        Ok(Some(answer))
    }

    /// A retried admission whose job is still undecided sends its intent again: if the first
    /// attempt's send failed after the job was written, this is what gets it processed. A
    /// duplicate message is harmless, the claim is idempotent. Not while its sale's opening is
    /// still to be released: the release sends it, in its place.
    async fn resend_if_pending(&self, job_id: JobId) -> Result<(), BackendError> {
        let Some(job) = self
            .load_job(job_id)
            .await?
            .filter(|job| job.status == JobStatus::Pending)
        else {
            return Ok(());
        };
        let mut intent = Intent {
            access: job.access,
            job_id: job.job_id,
            event_id: job.event_id,
            buyer_id: job.buyer_id,
            request: job.request,
            accepted_at: job.accepted_at,
            opens_at: None,
        };
        if let Some(opening) = self.opening_for(&intent).await? {
            if !self.sale_opened(&opening).await? {
                return Ok(());
            }
            // A pre-queued intent ages from the opening.
            intent.opens_at = Some(opening.start.at).filter(|opens| intent.accepted_at < *opens);
        }
        self.queue.send(&[intent]).await
    }

    /// A sale that announced a start (its channel's own, or its event's) keeps the intents
    /// admitted before it in its pre-queue, and those admitted after it in its late list while
    /// the pre-queue is being released (`prequeue.rs`); the answer, or `None` to admit the
    /// intent straight to SQS.
    async fn wait_for_opening(
        &self,
        item: &Item,
        intent: &Intent,
    ) -> Result<Option<Admission>, BackendError> {
        let Some(opening) = self.opening_for(intent).await? else {
            return Ok(None);
        };
        let opens = opening.start.at;
        if self.clock.now() < opens {
            let mut waiting_item = item.clone();
            // Its place is drawn at the opening; it ages from then.
            waiting_item.remove("ticket");
            waiting_item.insert("prequeued".to_owned(), n(opens.as_millisecond()));
            let waiting = Intent {
                opens_at: Some(opens),
                ..intent.clone()
            };
            let list = (&opening, List::Prequeue);
            match self.park(list, waiting_item, &waiting).await? {
                Parked::Entered => return Ok(Some(Admission::Prequeued(intent.job_id))),
                Parked::BuyerWaits(job_id) => return Ok(Some(Admission::AlreadyQueued(job_id))),
                Parked::JobExists => {
                    return Ok(self.earlier(intent).await?.map(|answer| match answer {
                        Admission::Duplicate(job_id) => Admission::Prequeued(job_id),
                        other => other,
                    }));
                }
                // The opening has begun: admitted as after the start.
                Parked::GateClosed => {}
            }
        }
        if self.sale_opened(&opening).await? {
            return Ok(None);
        }
        match self
            .park((&opening, List::Late), item.clone(), intent)
            .await?
        {
            Parked::Entered => Ok(Some(Admission::Accepted(intent.job_id))),
            Parked::JobExists => self.earlier(intent).await,
            Parked::GateClosed | Parked::BuyerWaits(_) => Ok(None),
        }
    }
}

#[async_trait]
impl Admissions for DynamoStore {
    /// The PENDING job, with its request's fingerprint, is put on condition that its key-named
    /// id is new: a new key costs that one write unit and one request. The item is read only
    /// when the put finds it taken, or when the request is refused (a reused key is answered as
    /// such, not refused). The intent is sent to SQS after the write; if that send fails the
    /// client gets an error and retries with the same key, which finds the job and sends the
    /// intent again.
    async fn admit(
        &self,
        key: &IdempotencyKey,
        intent: &Intent,
    ) -> Result<Admission, BackendError> {
        if intent.job_id != JobId::for_key(&intent.buyer_id, key) {
            return Err(BackendError::permanent(
                "on DynamoDB a job's id must be its key's (Admissions::new_job_id)",
            ));
        }
        if let Some(refusal) = self.check_request(intent).await? {
            return Ok(self.earlier(intent).await?.unwrap_or(refusal));
        }
        let mut item = job_item(&Job::pending(intent), self.clock.now())?;
        item.insert(
            "fingerprint".to_owned(),
            s(intent.request.fingerprint(&intent.event_id)),
        );
        // The job's place in its event's line (`line/counts.rs`).
        let ticket = self.ticket(&intent.event_id).await?;
        item.insert(
            "ticket".to_owned(),
            n(i64::try_from(ticket).unwrap_or(i64::MAX)),
        );
        if let Some(answer) = self.wait_for_opening(&item, intent).await? {
            return Ok(answer);
        }
        let put = put_new(&self.names.jobs_table, item, "job_id")?;
        if let Transacted::Committed = transact(&self.db, vec![put]).await? {
            self.queue.send(std::slice::from_ref(intent)).await?;
            return Ok(Admission::Accepted(intent.job_id));
        }
        self.earlier(intent)
            .await?
            .ok_or_else(|| BackendError::transient("a job taken at admission was not found"))
    }

    fn new_job_id(&self, buyer: &BuyerId, key: &IdempotencyKey) -> JobId {
        JobId::for_key(buyer, key)
    }
}
