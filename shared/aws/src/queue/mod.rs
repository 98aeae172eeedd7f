//! SQS: the intent queue (`sqs`), its batched sends (`send_batcher`), its depth (`depth`), the
//! dead-letter queue (`dead_letters`) and the queue settlements travel on from the API to the
//! workers (`settlements`).

pub(crate) mod dead_letters;
pub(crate) mod depth;
pub(crate) mod send_batcher;
pub(crate) mod settlements;
pub(crate) mod sqs;
