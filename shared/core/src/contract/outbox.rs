//! The contract of the outbox: every decided transition waits there until it is published.

use super::*;

/// Each decided transition is in the job's history, and in the outbox until it is marked
/// published, except a rejection the worker published as it was decided (DynamoDB's).
pub async fn every_transition_is_in_the_outbox_until_published(f: Fixture) {
    let event = with_event(&f).await;
    let held = admitted(&f, &event, "b1", exact(&["A-1-1"])).await;
    let rejected = admitted(&f, &event, "b2", exact(&["A-1-1"])).await;
    let failed = admitted(&f, &event, "b3", exact(&["A-1-4"])).await;
    // One at a time: within one batch the order of decisions is not defined.
    claim(&f, &held).await;
    claim(&f, &rejected).await;
    assert!(
        f.backend
            .jobs
            .close(
                failed.job_id,
                &Closure::Failed {
                    reason: "broken".into()
                },
                f.backend.clock.now()
            )
            .await
            .unwrap()
    );
    assert!(
        !f.backend
            .jobs
            .close(
                held.job_id,
                &Closure::Failed {
                    reason: "too late".into()
                },
                f.backend.clock.now()
            )
            .await
            .unwrap(),
        "a decided job is not failed"
    );
    f.backend
        .inventory
        .settle(held.job_id, JobAction::Cancel, &Tender::Nothing)
        .await
        .unwrap();

    let rejection = f.backend.jobs.history(rejected.job_id).await.unwrap();
    assert!(
        matches!(&rejection[..], [event] if event.status == JobStatus::Rejected),
        "{rejection:?}"
    );
    let entries = f.backend.outbox.unpublished(100).await.unwrap();
    let seen: Vec<(String, JobStatus)> = entries
        .iter()
        .map(|e| (e.event.job_id.to_string(), e.event.status))
        .filter(|(job, _)| *job != rejected.job_id.to_string())
        .collect();
    assert_eq!(
        seen,
        [
            (held.job_id.to_string(), JobStatus::Held),
            (failed.job_id.to_string(), JobStatus::Failed),
            (held.job_id.to_string(), JobStatus::Cancelled),
        ]
    );
    let waiting = entries.len();
    assert!(
        waiting == 3 || entries[1].event.job_id == rejected.job_id,
        "a waiting rejection waits in its turn"
    );
    // A page published but for one entry the publisher refused: that entry, and only it,
    // waits; the entries after it are not handed out again.
    let outbox = &f.backend.outbox;
    let marked = [entries[0].clone(), entries[2].clone()];
    outbox.mark_published(&marked).await.unwrap();
    let left = outbox.unpublished(100).await.unwrap();
    let events =
        |entries: &[OutboxEntry]| -> Vec<_> { entries.iter().map(|e| e.event.clone()).collect() };
    assert_eq!(left.len(), waiting - 2, "{left:?}");
    assert_eq!(
        left[0].event, entries[1].event,
        "the refused entry waits, first"
    );
    assert!(
        !events(&left).contains(&entries[2].event),
        "published past it: not again"
    );
    outbox.mark_published(&left[..1]).await.unwrap();
    let after = outbox.unpublished(100).await.unwrap();
    assert_eq!(events(&after), events(&left[1..]));
}
