//! The contract of the dead-letter queue: the redrive limit, listing, replay and purge.

use super::*;

/// A message received more than the redrive limit goes to the dead-letter queue, and an explicitly
/// dead-lettered one is never delivered again.
pub async fn messages_received_too_often_are_dead_lettered(f: Fixture) {
    let event = with_event(&f).await;
    f.backend
        .queue
        .send(&[intent(&f, &event, "b1", exact(&["A-1-1"]))])
        .await
        .unwrap();
    for attempt in 1..=f.max_receive_count {
        let got = receive_all(&f, 1).await;
        assert_eq!(got.len(), 1, "receive {attempt}");
        assert_eq!(got[0].receive_count, attempt);
        f.backend
            .queue
            .retry_after(&got[0].receipt, Duration::ZERO)
            .await
            .unwrap();
    }
    assert!(
        f.backend
            .queue
            .receive(10, Duration::from_millis(1_500))
            .await
            .unwrap()
            .is_empty(),
        "redriven to the DLQ"
    );
    let dead = eventually(QUEUE_WITHIN, "the redriven message in the DLQ", || async {
        let depth = f.backend.queue.depth().await.unwrap();
        (depth.dead > 0).then_some(depth.dead)
    })
    .await;
    assert_eq!(dead, 1);

    f.backend
        .queue
        .send(&[intent(&f, &event, "b2", exact(&["A-1-2"]))])
        .await
        .unwrap();
    let poison = receive_all(&f, 1).await;
    f.backend
        .queue
        .dead_letter(&poison[0], "cannot be processed")
        .await
        .unwrap();
    assert_stays_away(&f, &event, "the dead letter is not delivered").await;
}

/// Dead letters can be listed with their reason, replayed to the main queue, or purged; a failed
/// job reopens for a replay, and its history shows every transition.
pub async fn dead_letters_are_listed_replayed_and_purged(f: Fixture) {
    let event = with_event(&f).await;
    let (replayed, purged, untouched) = three_dead_letters(&f, &event).await;

    let letters = f
        .backend
        .queue
        .dead_letters(10, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(letters.len(), 3);
    let (replay, others): (Vec<_>, Vec<_>) = letters
        .into_iter()
        .partition(|l| l.job_id == Some(replayed.job_id));
    let (purge, left): (Vec<_>, Vec<_>) = others
        .into_iter()
        .partition(|l| l.job_id == Some(purged.job_id));
    assert_eq!((replay.len(), purge.len(), left.len()), (1, 1, 1));
    assert_eq!(replay[0].reason.as_deref(), Some("broken once"));
    assert_eq!(replay[0].receive_count, 1);
    assert!(
        f.backend
            .jobs
            .reopen(replayed.job_id, f.backend.clock.now())
            .await
            .unwrap()
    );
    assert!(
        !f.backend
            .jobs
            .reopen(replayed.job_id, f.backend.clock.now())
            .await
            .unwrap(),
        "already pending"
    );
    f.backend.queue.redrive(&replay).await.unwrap();
    f.backend.queue.purge(&purge).await.unwrap();
    let back = receive_all(&f, 1).await;
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].job_id, Some(replayed.job_id));
    let Message::Intent(decoded) = back[0].message.clone() else {
        panic!("the replayed message decodes");
    };
    assert!(matches!(
        claim(&f, &decoded).await,
        ClaimOutcome::Held { .. }
    ));
    assert_only_untouched_left(&f, untouched.job_id).await;
    assert_replayed_history_and_jobs(&f, &event, &replayed, &purged).await;
}

/// Dead-letters three messages: two of jobs that failed (`replayed` with reason "broken once"
/// after a first failure), and a third, `untouched`, with no job, that the check leaves alone.
async fn three_dead_letters(f: &Fixture, event: &EventId) -> (Intent, Intent, Intent) {
    let replayed = admitted(f, event, "b1", exact(&["A-1-1"])).await;
    let purged = admitted(f, event, "b2", exact(&["A-1-2"])).await;
    let untouched = intent(f, event, "b3", exact(&["A-1-3"]));
    f.backend
        .queue
        .send(std::slice::from_ref(&untouched))
        .await
        .unwrap();
    let mut deliveries = receive_all(f, 3).await;
    let order = [replayed.job_id, purged.job_id, untouched.job_id].map(Some);
    deliveries.sort_by_key(|d| order.iter().position(|id| *id == d.job_id));
    assert_eq!(job_ids(&deliveries), order);
    for (delivery, reason) in deliveries
        .iter()
        .zip(["broken once", "broken twice", "left"])
    {
        let job_id = delivery.job_id.expect("a job id");
        if job_id != untouched.job_id {
            fail_job(f, job_id, reason).await;
        }
        f.backend.queue.dead_letter(delivery, reason).await.unwrap();
    }
    let job = f.backend.jobs.job(replayed.job_id).await.unwrap().unwrap();
    assert_eq!(
        (job.first_error.as_deref(), job.last_error.as_deref()),
        (Some("first trouble"), Some("broken once"))
    );
    let depth = f.backend.queue.depth().await.unwrap();
    assert_eq!((depth.dead, depth.ready), (3, 0), "{depth:?}");
    (replayed, purged, untouched)
}

/// The listing hid all three letters for its hold (on SQS). Once the untouched letter is listed
/// again the hold is over for the other two as well: they must be gone from the DLQ.
async fn assert_only_untouched_left(f: &Fixture, untouched: JobId) {
    let listed = eventually(
        QUEUE_WITHIN,
        "the untouched dead letter, listed again once the hold is over",
        || async {
            let listed = f
                .backend
                .queue
                .dead_letters(10, Duration::ZERO)
                .await
                .unwrap();
            (!listed.is_empty()).then_some(listed)
        },
    )
    .await;
    let listed: Vec<_> = listed.iter().map(|l| l.job_id).collect();
    assert_eq!(
        listed,
        [Some(untouched)],
        "the replayed and the purged letter are gone from the DLQ"
    );
}

/// Records two failures of the job (the first one kept as its first error) and fails it.
async fn fail_job(f: &Fixture, job_id: JobId, reason: &str) {
    f.backend
        .jobs
        .note_failure(job_id, "first trouble")
        .await
        .unwrap();
    f.backend.jobs.note_failure(job_id, reason).await.unwrap();
    assert!(
        f.backend
            .jobs
            .close(
                job_id,
                &Closure::Failed {
                    reason: reason.into()
                },
                f.backend.clock.now()
            )
            .await
            .unwrap()
    );
}

/// The replayed job's history is FAILED, PENDING, HELD, and the event lists both jobs as they ended.
async fn assert_replayed_history_and_jobs(
    f: &Fixture,
    event: &EventId,
    replayed: &Intent,
    purged: &Intent,
) {
    let history: Vec<JobStatus> = f
        .backend
        .jobs
        .history(replayed.job_id)
        .await
        .unwrap()
        .iter()
        .map(|e| e.status)
        .collect();
    assert_eq!(
        history,
        [JobStatus::Failed, JobStatus::Pending, JobStatus::Held]
    );
    let mut of_event: Vec<_> = f
        .backend
        .jobs
        .of_event(event)
        .await
        .unwrap()
        .into_iter()
        .map(|j| (j.job_id, j.status))
        .collect();
    of_event.sort_by_key(|(id, _)| *id);
    let mut expected = vec![
        (replayed.job_id, JobStatus::Held),
        (purged.job_id, JobStatus::Failed),
    ];
    expected.sort_by_key(|(id, _)| *id);
    assert_eq!(of_event, expected);
}
