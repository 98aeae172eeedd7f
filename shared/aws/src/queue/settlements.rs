//! Settlements the API sends to the workers. The API task's role may not write seat items, so
//! on AWS a buyer's confirm, cancel or extension (and a payment's confirm) travels on a queue of
//! its own (`<prefix>-settlements`: a sale's backlog of intents never delays it) to a worker,
//! which settles it as any settlement is settled (`settle.rs`, the domain deciding) and puts the
//! answer in the outbox table (`settled#<request>`), where the API reads it.
//!
//! A settlement nobody answered within [`ANSWER_WAIT`] is answered 503 by the API, and a worker
//! that receives it after [`STALE_AFTER`] drops it unsettled, so a buyer's retry is never
//! followed by a second, late effect of the first request. Settling twice is harmless anyway:
//! a repeated confirm or cancel is answered with the job as it stands.

use std::sync::Weak;
use std::time::{Duration, SystemTime};

use aws_sdk_sqs::types::MessageSystemAttributeName;
use serde::{Deserialize, Serialize};

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, get_s, n, s};
use seatclaim_core::domain::{HoldExtension, JobAction, JobConflict, JobId, Tender};
use seatclaim_core::ports::{BackendError, BackgroundTask, Settled};
use seatclaim_core::step::optimistic;

/// How long the API waits for a worker's answer before it answers 503.
const ANSWER_WAIT: Duration = Duration::from_secs(10);
/// A settlement older than this when a worker receives it is dropped: its API call has been
/// answered 503 (after [`ANSWER_WAIT`]) and the buyer may have asked again since.
const STALE_AFTER: Duration = Duration::from_secs(15);
/// How long a worker's answer is kept (the outbox table's TTL removes it).
const ANSWER_KEPT_SECONDS: i64 = 3_600;
/// How soon a settlement that failed on a worker is received again.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// The longest pause between two reads of the answer.
const LONGEST_PAUSE: Duration = Duration::from_millis(200);

/// A settlement as it travels: the job, the action and what a confirm brings toward the price
/// (a request without it, from an API older than the field, brings nothing: the safe reading).
#[derive(Serialize, Deserialize)]
struct Request {
    request: uuid::Uuid,
    job_id: JobId,
    action: JobAction,
    #[serde(default)]
    tender: Tender,
}

/// A worker's answer to one settlement.
#[derive(Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
enum Answer {
    /// Settled (or it had already happened): the job now stands as its item says.
    Done,
    NotFound,
    Conflict {
        conflict: JobConflict,
    },
}

/// The outbox-table key of a settlement's answer.
fn answer_key(request: uuid::Uuid) -> Item {
    Item::from([
        ("job_id".to_owned(), s(format!("settled#{request}"))),
        ("id".to_owned(), s("answer")),
    ])
}

impl DynamoStore {
    /// Settles on a worker: sends the settlement and waits for the answer. An answer that needs
    /// no write (no such job, a repeat, a conflict on the job as read) is given here at once.
    pub(crate) async fn settle_on_worker(
        &self,
        job_id: JobId,
        action: JobAction,
        tender: &Tender,
    ) -> Result<Settled, BackendError> {
        let loaded = self.load_job(job_id).await?;
        let extension = match &loaded {
            Some(job) => self
                .event_meta(&job.event_id)
                .await?
                .map_or(HoldExtension::NONE, |meta| meta.extension),
            None => HoldExtension::NONE,
        };
        if let Err(answer) = Settled::plan(loaded, action, tender, extension, self.clock.now()) {
            return Ok(answer);
        }
        let request = Request {
            request: uuid::Uuid::new_v4(),
            job_id,
            action,
            tender: tender.clone(),
        };
        let body = serde_json::to_string(&request)
            .map_err(|e| BackendError::permanent(format!("encoding a settlement: {e}")))?;
        self.queue
            .sqs
            .send_message()
            .queue_url(self.settlements_url()?)
            .message_body(body)
            .send()
            .await
            .map_err(|e| classify("SendMessage settlement", e))?;
        match self.await_answer(request.request).await? {
            Answer::Done => Ok(self
                .load_job(job_id)
                .await?
                .map_or(Settled::NotFound, |job| Settled::Done(Box::new(job)))),
            Answer::NotFound => Ok(Settled::NotFound),
            Answer::Conflict { conflict } => Ok(Settled::Conflict(conflict)),
        }
    }

    fn settlements_url(&self) -> Result<&str, BackendError> {
        self.queue
            .settlements_url
            .as_deref()
            .ok_or_else(|| BackendError::permanent("this process has no settlements queue"))
    }

    /// Reads the answer (strongly consistent) until it is there, pausing longer each time.
    async fn await_answer(&self, request: uuid::Uuid) -> Result<Answer, BackendError> {
        let deadline = tokio::time::Instant::now() + ANSWER_WAIT;
        let mut pause = Duration::from_millis(10);
        loop {
            let output = self
                .db
                .get_item()
                .table_name(&self.names.outbox_table)
                .set_key(Some(answer_key(request)))
                .consistent_read(true)
                .send()
                .await
                .map_err(|e| classify("GetItem settlement answer", e))?;
            if let Some(item) = output.item() {
                return serde_json::from_str(get_s(item, "answer")?)
                    .map_err(|e| BackendError::permanent(format!("a settlement's answer: {e}")));
            }
            if tokio::time::Instant::now() + pause > deadline {
                return Err(BackendError::transient(format!(
                    "no worker answered the settlement within {} s",
                    ANSWER_WAIT.as_secs()
                )));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(LONGEST_PAUSE);
        }
    }

    /// Settles one received settlement and puts its answer; a stale one is dropped unsettled.
    async fn serve_settlement(
        &self,
        body: &str,
        sent: Option<SystemTime>,
    ) -> Result<(), BackendError> {
        let Ok(request) = serde_json::from_str::<Request>(body) else {
            tracing::warn!(body, "dropped a settlement this build cannot read");
            return Ok(());
        };
        let age = sent.and_then(|sent| SystemTime::now().duration_since(sent).ok());
        if age.is_some_and(|age| age > STALE_AFTER) {
            tracing::warn!(job_id = %request.job_id, "dropped a stale settlement; its caller was answered 503");
            return Ok(());
        }
        let settled =
            optimistic::settle(self, request.job_id, request.action, &request.tender).await?;
        let answer = match settled {
            Settled::Done(_) => Answer::Done,
            Settled::NotFound => Answer::NotFound,
            Settled::Conflict(conflict) => Answer::Conflict { conflict },
        };
        let encoded = serde_json::to_string(&answer)
            .map_err(|e| BackendError::permanent(format!("encoding an answer: {e}")))?;
        let mut item = answer_key(request.request);
        item.insert("answer".to_owned(), s(encoded));
        item.insert(
            "expires_at".to_owned(),
            n(self.clock.now().as_second() + ANSWER_KEPT_SECONDS),
        );
        self.db
            .put_item()
            .table_name(&self.names.outbox_table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| classify("PutItem settlement answer", e))?;
        Ok(())
    }

    /// One long poll of the settlements queue; each settlement received is served, and deleted
    /// once answered. One that fails is made visible again in a second, for another try while
    /// its caller still waits.
    async fn serve_settlements_once(&self) -> Result<(), BackendError> {
        let url = self.settlements_url()?;
        let output = self
            .queue
            .sqs
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .message_system_attribute_names(MessageSystemAttributeName::SentTimestamp)
            .send()
            .await
            .map_err(|e| classify("ReceiveMessage settlements", e))?;
        let served = output.messages().iter().map(|message| async move {
            let sent = message
                .attributes()
                .and_then(|a| a.get(&MessageSystemAttributeName::SentTimestamp))
                .and_then(|ms| ms.parse::<u64>().ok())
                .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms));
            let served = self
                .serve_settlement(message.body().unwrap_or_default(), sent)
                .await;
            if let Err(error) = &served {
                tracing::warn!(%error, "a settlement failed; it is tried again");
            }
            (served.is_ok(), message.receipt_handle().unwrap_or_default())
        });
        let served = futures_util::future::join_all(served).await;
        let handles = |wanted: bool| -> Vec<&str> {
            served
                .iter()
                .filter(|(ok, _)| *ok == wanted)
                .map(|(_, handle)| *handle)
                .collect()
        };
        self.queue
            .change_visibility(url, &handles(false), RETRY_AFTER)
            .await?;
        self.queue.delete_from(url, &handles(true)).await
    }
}

/// Serves the settlements queue (on the worker's backend) until `stop` is cancelled or the
/// store is dropped. A poll in hand is finished, never abandoned: what it received is answered,
/// or it would wait hidden for the queue's visibility timeout (`setup/provision.rs`) while its caller gives up.
pub(crate) fn server(store: Weak<DynamoStore>) -> BackgroundTask {
    BackgroundTask::new("settlements", |stop| async move {
        while !stop.is_cancelled() {
            let Some(store) = store.upgrade() else {
                return;
            };
            if let Err(error) = store.serve_settlements_once().await {
                tracing::warn!(%error, "reading the settlements queue failed; trying again");
                drop(store);
                tokio::select! {
                    () = stop.cancelled() => {}
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        }
    })
}
