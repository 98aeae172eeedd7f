use super::*;
use seatclaim_core::domain::ReasonCode;

/// One error of each cause (and each status axum rejects with).
fn one_of_each() -> Vec<ApiError> {
    let rejected = |status| ApiError::Rejected {
        status,
        detail: "rejected".into(),
    };
    vec![
        ApiError::Invalid(ValidationError::new("field", "is wrong")),
        ApiError::BadRequest("bad".into()),
        ApiError::UnknownSeats(ValidationError::new("seat_ids", "names Z-9")),
        ApiError::UnknownSection(ValidationError::new("section", "Z does not exist")),
        ApiError::Unservable(ValidationError::new("quantity", "no row seats 30")),
        ApiError::NotFound("missing".into()),
        ApiError::Conflict(JobConflict::HoldLapsed),
        ApiError::EventExists(EventId::parse("e1").unwrap()),
        ApiError::KeyReused,
        ApiError::AlreadyQueued(seatclaim_core::domain::JobId::time_ordered()),
        rejected(StatusCode::BAD_REQUEST),
        rejected(StatusCode::METHOD_NOT_ALLOWED),
        rejected(StatusCode::PAYLOAD_TOO_LARGE),
        rejected(StatusCode::UNSUPPORTED_MEDIA_TYPE),
        rejected(StatusCode::UNPROCESSABLE_ENTITY),
        rejected(StatusCode::INTERNAL_SERVER_ERROR),
        ApiError::Unauthenticated(AuthError::Missing),
        ApiError::Forbidden {
            detail: "no".into(),
            scope: Some("admin".into()),
        },
        ApiError::TooManyRequests { retry_after: 2 },
        ApiError::TooManyLongPolls { held: 4 },
        ApiError::Overloaded,
        ApiError::ReadsShed,
        ApiError::TimedOut,
        ApiError::BodyTooSlow(std::time::Duration::from_secs(10)),
        ApiError::PaymentRequired(seatclaim_core::domain::Money {
            amount: 1,
            currency: seatclaim_core::domain::Currency::parse("EUR").unwrap(),
        }),
        ApiError::BadSignature(crate::stripe::SignatureError::Stale),
        ApiError::Refused(seatclaim_core::domain::unknown_code()),
        ApiError::CodeExists(EventId::parse("e1").unwrap()),
        ApiError::NotConfigured("set it".into()),
        ApiError::Backend(BackendError::transient("down")),
        ApiError::Backend(BackendError::permanent("broken")),
    ]
}

#[test]
fn every_error_has_a_status_its_problem_type_is_documented_with() {
    for error in one_of_each() {
        // A new cause fails to compile here: add it to `one_of_each` (and the document).
        match &error {
            ApiError::Invalid(_)
            | ApiError::BadRequest(_)
            | ApiError::UnknownSeats(_)
            | ApiError::UnknownSection(_)
            | ApiError::Unservable(_)
            | ApiError::NotFound(_)
            | ApiError::Conflict(_)
            | ApiError::EventExists(_)
            | ApiError::KeyReused
            | ApiError::AlreadyQueued(_)
            | ApiError::Rejected { .. }
            | ApiError::Unauthenticated(_)
            | ApiError::Forbidden { .. }
            | ApiError::TooManyRequests { .. }
            | ApiError::TooManyLongPolls { .. }
            | ApiError::Overloaded
            | ApiError::ReadsShed
            | ApiError::TimedOut
            | ApiError::BodyTooSlow(_)
            | ApiError::PaymentRequired(_)
            | ApiError::BadSignature(_)
            | ApiError::Refused(_)
            | ApiError::CodeExists(_)
            | ApiError::NotConfigured(_)
            | ApiError::Backend(_) => {}
        }
        let (status, kind, _) = error.classify();
        assert!(
            kind.statuses().contains(&status.as_u16()),
            "{error:?}: {status} with {kind:?}"
        );
        let response = error.into_response();
        assert_eq!(response.status(), status);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "application/problem+json"
        );
    }
}

#[tokio::test]
async fn every_problem_carries_the_reason_code_of_its_cause() {
    for error in one_of_each() {
        let (_, _, code) = error.classify();
        let body = axum::body::to_bytes(error.into_response().into_body(), usize::MAX)
            .await
            .unwrap();
        let problem: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(problem["reason_code"], code.as_str(), "{problem}");
    }
}

#[test]
fn a_conflict_of_a_job_carries_the_code_of_the_conflict() {
    let conflict = JobConflict::WrongStatus {
        status: seatclaim_core::domain::JobStatus::Sold,
        action: seatclaim_core::domain::JobAction::Cancel,
    };
    let (status, _, code) = ApiError::from(conflict).classify();
    assert_eq!(
        (status, code),
        (StatusCode::CONFLICT, ReasonCode::WrongStatus)
    );
    let (status, _, code) = ApiError::from(JobConflict::PaymentRequired {
        due: seatclaim_core::domain::Money {
            amount: 1,
            currency: seatclaim_core::domain::Currency::parse("EUR").unwrap(),
        },
    })
    .classify();
    assert_eq!(
        (status, code),
        (StatusCode::PAYMENT_REQUIRED, ReasonCode::PaymentRequired)
    );
}
