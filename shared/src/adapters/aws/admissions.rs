use async_trait::async_trait;

use super::DynamoStore;
use super::error::classify;
use super::item::{Item, Transacted, get_s, n, put_new, s, transact};
use super::jobs::job_item;
use crate::domain::{IdempotencyKey, Intent, Job, JobId, JobStatus, SeatRequest};
use crate::ports::{Admission, Admissions, BackendError, IntentQueue};

/// Idempotency records expire (DynamoDB TTL) after a week: far longer than any client retries.
const KEY_TTL_SECONDS: i64 = 7 * 24 * 3600;

fn key_id(intent: &Intent, key: &IdempotencyKey) -> String {
    // Buyer ids cannot contain '#', so the pair is unambiguous.
    format!("{}#{}", intent.buyer_id, key.as_str())
}

impl DynamoStore {
    async fn find_key(&self, id: &str) -> Result<Option<(String, JobId)>, BackendError> {
        let output = self
            .db
            .get_item()
            .table_name(&self.names.idempotency_table)
            .key("id", s(id))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem idempotency", e))?;
        output
            .item()
            .map(|item| {
                let job_id = JobId::parse(get_s(item, "job_id")?).ok_or_else(|| {
                    BackendError::permanent("idempotency record names an invalid job")
                })?;
                Ok((get_s(item, "fingerprint")?.to_owned(), job_id))
            })
            .transpose()
    }

    /// Refuses requests for an event, seats or section that do not exist.
    async fn check_request(&self, intent: &Intent) -> Result<Option<Admission>, BackendError> {
        let Some(meta) = self.event_meta(&intent.event_id).await? else {
            return Ok(Some(Admission::UnknownEvent));
        };
        let (found, section_known) = match &intent.request {
            SeatRequest::Section { section, .. } => (
                Vec::new(),
                meta.sections.iter().any(|s| s == section.as_str()),
            ),
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
                (found, false)
            }
        };
        Ok(Admission::refusal(&intent.request, &found, section_known))
    }

    /// The answer for a key used before, if it was: the earlier job (its intent sent again while
    /// undecided), or the refusal of a key reused for another request.
    async fn earlier(&self, id: &str, intent: &Intent) -> Result<Option<Admission>, BackendError> {
        let Some((earlier, job_id)) = self.find_key(id).await? else {
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
    /// duplicate message is harmless, the claim is idempotent.
    async fn resend_if_pending(&self, job_id: JobId) -> Result<(), BackendError> {
        if let Some(job) = self
            .load_job(job_id)
            .await?
            .filter(|job| job.status == JobStatus::Pending)
        {
            let intent = Intent {
                job_id: job.job_id,
                event_id: job.event_id,
                buyer_id: job.buyer_id,
                request: job.request,
                accepted_at: job.accepted_at,
            };
            self.queue.send(&[intent]).await?;
        }
        Ok(())
    }
}

#[async_trait]
impl Admissions for DynamoStore {
    /// The idempotency record and the PENDING job are one conditional transaction, tried first:
    /// a new key costs that one request. The key is read only when the transaction finds it
    /// taken, or when the request is refused (a reused key is answered as such, not refused).
    /// The intent is sent to SQS after the commit; if that send fails the client gets an error
    /// and retries with the same key, which finds the job and sends the intent again.
    async fn admit(
        &self,
        key: &IdempotencyKey,
        intent: &Intent,
    ) -> Result<Admission, BackendError> {
        let id = key_id(intent, key);
        if let Some(refusal) = self.check_request(intent).await? {
            return Ok(match self.earlier(&id, intent).await? {
                Some(answer) => answer,
                None => refusal,
            });
        }
        // Two rounds at most: a key taken and then expired between the write and the read.
        for _ in 0..2 {
            let now = self.clock.now();
            let job = Job::pending(intent);
            let writes = vec![
                put_new(
                    &self.names.idempotency_table,
                    key_record(&id, intent, now),
                    "id",
                )?,
                put_new(&self.names.jobs_table, job_item(&job, now)?, "job_id")?,
            ];
            if let Transacted::Committed = transact(&self.db, writes).await? {
                self.queue.send(std::slice::from_ref(intent)).await?;
                return Ok(Admission::Accepted(intent.job_id));
            }
            if let Some(answer) = self.earlier(&id, intent).await? {
                return Ok(answer);
            }
        }
        Err(BackendError::transient(
            "idempotency record changed during admission",
        ))
    }
}

/// The idempotency record of a new admission, expiring after [`KEY_TTL_SECONDS`].
fn key_record(id: &str, intent: &Intent, now: jiff::Timestamp) -> Item {
    Item::from([
        ("id".to_owned(), s(id)),
        (
            "fingerprint".to_owned(),
            s(intent.request.fingerprint(&intent.event_id)),
        ),
        ("job_id".to_owned(), s(intent.job_id.to_string())),
        ("created_at".to_owned(), n(now.as_millisecond())),
        (
            "expires_at".to_owned(),
            n(now.as_second() + KEY_TTL_SECONDS),
        ),
    ])
}
