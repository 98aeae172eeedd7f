//! AWS errors sorted into "retry" and "give up", the only distinction the worker acts on.

use std::error::Error;

use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};

use seatclaim_core::ports::BackendError;

/// Error codes that mean "slow down or try again": throttling, capacity, service trouble, and
/// DynamoDB's transaction conflicts.
const TRANSIENT_CODES: &[&str] = &[
    "ThrottlingException",
    "Throttling",
    "RequestThrottled",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "InternalServerError",
    "InternalFailure",
    "InternalError",
    "ServiceUnavailable",
    "TransactionConflictException",
    "TransactionInProgressException",
    "KmsThrottled",
];

/// Classifies any SDK error: network trouble, timeouts and the codes above are transient;
/// everything else (validation, missing resources, access denied) is permanent.
pub(crate) fn classify<E, R>(operation: &str, error: SdkError<E, R>) -> BackendError
where
    E: ProvideErrorMetadata + Error + Send + Sync + 'static,
    R: std::fmt::Debug,
{
    let message = format!("{operation}: {}", DisplayErrorContext(&error));
    let transient = match &error {
        SdkError::ServiceError(context) => context
            .err()
            .code()
            .is_some_and(|code| TRANSIENT_CODES.contains(&code)),
        SdkError::ConstructionFailure(_) => false,
        _ => true,
    };
    if transient {
        BackendError::transient(message)
    } else {
        BackendError::permanent(message)
    }
}

/// The end of a conditional write: `Ok(true)` if it applied, `Ok(false)` if its condition
/// failed (an outcome, not an error), otherwise the classified error.
pub(crate) fn applied<T, E, R>(
    operation: &str,
    result: Result<T, SdkError<E, R>>,
) -> Result<bool, BackendError>
where
    E: ProvideErrorMetadata + Error + Send + Sync + 'static,
    R: std::fmt::Debug,
{
    match result {
        Ok(_) => Ok(true),
        Err(SdkError::ServiceError(context))
            if context.err().code() == Some("ConditionalCheckFailedException") =>
        {
            Ok(false)
        }
        Err(error) => Err(classify(operation, error)),
    }
}

/// A request the code built could not be built: a bug, never worth retrying.
pub(crate) fn build_error(error: impl std::fmt::Display) -> BackendError {
    BackendError::permanent(format!("cannot build an AWS request: {error}"))
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::error::ErrorMetadata;
    use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;

    use super::*;

    fn service_error(code: &str) -> SdkError<TransactWriteItemsError, ()> {
        SdkError::service_error(
            TransactWriteItemsError::generic(ErrorMetadata::builder().code(code).build()),
            (),
        )
    }

    #[test]
    fn throttling_conflicts_and_outages_are_retried() {
        for code in [
            "ThrottlingException",
            "ProvisionedThroughputExceededException",
            "TransactionConflictException",
            "InternalServerError",
        ] {
            assert!(classify("op", service_error(code)).is_transient(), "{code}");
        }
        assert!(
            classify(
                "op",
                SdkError::<TransactWriteItemsError, ()>::timeout_error("slow")
            )
            .is_transient()
        );
    }

    #[test]
    fn validation_and_access_errors_are_permanent() {
        for code in [
            "ValidationException",
            "AccessDeniedException",
            "ResourceNotFoundException",
        ] {
            assert!(
                !classify("op", service_error(code)).is_transient(),
                "{code}"
            );
        }
    }
}
