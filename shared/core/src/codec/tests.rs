use super::*;
use crate::domain::{
    BuyerId, EventId, Job, JobId, JobStatus, Reason, ReasonCode, SeatId, SeatLimit, SeatRequest,
};

fn job() -> Job {
    Job {
        access: None,
        job_id: JobId::new(),
        event_id: EventId::parse("e1").unwrap(),
        buyer_id: BuyerId::parse("b1").unwrap(),
        request: SeatRequest::exact(&["A-1-1".into()]).unwrap(),
        status: JobStatus::Held,
        seat_ids: vec![SeatId::parse("A-1-1").unwrap()],
        hold_expires_at: Some(Timestamp::from_second(100).unwrap()),
        reason: None,
        reason_code: None,
        accepted_at: Timestamp::from_second(1).unwrap(),
        first_error: Some("throttled".into()),
        last_error: None,
        amount_due: None,
        payment_ref: None,
        hold_extensions: 0,
    }
}

#[test]
fn a_job_survives_its_record() {
    let job = job();
    assert_eq!(JobRecord::of(&job).unwrap().into_job().unwrap(), job);
}

#[test]
fn a_rejection_survives_its_record_with_its_code() {
    let pending = Job {
        status: JobStatus::Pending,
        ..job()
    };
    let rejected = pending
        .reject(
            &SeatLimit::parse(4).unwrap().reason(),
            Timestamp::UNIX_EPOCH,
        )
        .unwrap()
        .job;
    let record = JobRecord::of(&rejected).unwrap();
    assert_eq!(record.reason_code.as_deref(), Some("buyer_limit"));
    assert_eq!(record.into_job().unwrap(), rejected);
}

#[test]
fn a_job_stored_before_codes_reads_with_the_code_of_its_status_and_text() {
    let stored = |status: JobStatus, reason: &str| {
        let mut record = JobRecord::of(&job()).unwrap();
        record.status = status.as_str().into();
        record.reason = Some(reason.into());
        record.reason_code = None;
        record.into_job().unwrap().reason_code
    };
    assert_eq!(
        stored(JobStatus::Rejected, &Reason::seat_unavailable().text),
        Some(ReasonCode::SeatUnavailable)
    );
    assert_eq!(
        stored(JobStatus::Rejected, "no 2 adjacent seats in section S"),
        Some(ReasonCode::NoAdjacentSeats)
    );
    assert_eq!(
        stored(JobStatus::Failed, "gave up after 5 attempts"),
        Some(ReasonCode::Failed)
    );
    assert_eq!(stored(JobStatus::Rejected, "some other words"), None);
}

#[test]
fn an_event_recorded_before_codes_reads_with_the_code_of_its_text() {
    let pending = Job {
        status: JobStatus::Pending,
        ..job()
    };
    let event = pending
        .reject(&Reason::request_expired(), Timestamp::UNIX_EPOCH)
        .unwrap()
        .event;
    let mut json: serde_json::Value = serde_json::from_str(&encode_event(&event).unwrap()).unwrap();
    assert_eq!(json["reason_code"], "request_expired");
    json["reason_code"] = "a_code_from_a_newer_build".into();
    assert_eq!(
        decode_event(&json.to_string()).unwrap(),
        event,
        "an unknown code"
    );
    json.as_object_mut().unwrap().remove("reason_code");
    assert_eq!(decode_event(&json.to_string()).unwrap(), event, "no code");
    let line = serde_json::json!({"detail-type": "Reservation Rejected", "detail": json});
    assert_eq!(decode_log_line(&line.to_string()).unwrap(), Some(event));
}

#[test]
fn a_record_with_an_unknown_status_is_refused_for_good() {
    let mut record = JobRecord::of(&job()).unwrap();
    record.status = "LOST".into();
    let error = record.into_job().unwrap_err();
    assert!(!error.is_transient());
    assert!(error.message.contains("unknown status"), "{error}");
}

#[test]
fn a_held_seat_without_a_deadline_is_inconsistent() {
    let record = SeatRecord {
        seat_id: "A-1-1".into(),
        section: "A".into(),
        state: "HELD".into(),
        job_id: Some(JobId::new().to_string()),
        hold_until: None,
        place: None,
    };
    assert!(
        record
            .into_seat()
            .unwrap_err()
            .message
            .contains("inconsistent")
    );
}

#[test]
fn an_undecodable_body_is_kept_as_it_came() {
    let message = decode_message("{not an intent".into());
    assert!(matches!(&message, Message::Undecodable { body, .. } if body == "{not an intent"));
    assert_eq!(encode_message(&message).unwrap(), "{not an intent");
}
