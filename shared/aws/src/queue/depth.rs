//! How many messages wait where on SQS, as its approximate counters say.

use aws_sdk_sqs::types::QueueAttributeName;

use crate::dynamo::error::classify;
use crate::queue::sqs::SqsQueue;
use seatclaim_core::ports::{BackendError, QueueDepth};

impl SqsQueue {
    /// Ready, in-flight and dead messages: two `GetQueueAttributes` calls.
    pub(crate) async fn queue_depth(&self) -> Result<QueueDepth, BackendError> {
        let main = self.attributes(&self.url).await?;
        let dead = self.attributes(&self.dlq_url).await?;
        Ok(QueueDepth {
            ready: main.0,
            in_flight: main.1,
            dead: dead.0,
        })
    }

    /// (visible, in flight) messages of a queue, as SQS approximates them.
    async fn attributes(&self, url: &str) -> Result<(u64, u64), BackendError> {
        let output = self
            .sqs
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
            .send()
            .await
            .map_err(|e| classify("GetQueueAttributes", e))?;
        let count = |name: QueueAttributeName| {
            output
                .attributes()
                .and_then(|a| a.get(&name))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        Ok((
            count(QueueAttributeName::ApproximateNumberOfMessages),
            count(QueueAttributeName::ApproximateNumberOfMessagesNotVisible),
        ))
    }
}
