//! A channel's own opening in the port contract: a channel that announced a `sale_starts_at` of
//! its own opens its own pre-queue exactly as the event's start does, before the public's.

use jiff::SignedDuration;

use crate::app;
use crate::contract::Fixture;
use crate::domain::{ChannelName, JobStatus, ReasonCode, Seed, digest, shuffle};
use crate::ports::Admission;

use super::access::{Times, admit, assert_rejected, code, decided, presale_from};
use super::openings::receive_all;

/// A channel's intents admitted before its own start wait in its own pre-queue (one per buyer,
/// beside the same buyer's wait for the event's start), and any decided early is rejected
/// `channel_not_open`; at the channel's start its pre-queue is queued in the order its own seed
/// draws, and published naming the channel, while the event's pre-queue waits for the event's.
pub async fn a_channel_opens_its_own_pre_queue_before_the_public(f: Fixture) {
    let now = f.backend.clock.now().as_second();
    let channel_starts = jiff::Timestamp::from_second(now + 600).unwrap();
    let event_starts = channel_starts + SignedDuration::from_secs(600);
    let times = Times {
        event_starts: Some(event_starts),
        channel_starts: Some(channel_starts),
        release_at: None,
    };
    let event = presale_from(&f, "presale-opening", times).await;
    let hash = code(&f, &event, "FAN-OPEN", 10, false).await;
    let mut fans = Vec::new();
    for n in 0..5 {
        let (intent, admission) = admit(&f, &event, &format!("fan{n}"), "F", Some(&hash)).await;
        assert_eq!(admission, Admission::Prequeued(intent.job_id));
        fans.push(intent);
    }
    let (_, again) = admit(&f, &event, "fan0", "F", Some(&hash)).await;
    assert_eq!(again, Admission::AlreadyQueued(fans[0].job_id));
    let (public, admission) = admit(&f, &event, "fan0", "A", None).await;
    assert_eq!(
        admission,
        Admission::Prequeued(public.job_id),
        "the event's own"
    );
    let fanclub = ChannelName::parse("fanclub").unwrap();
    let catalog = &f.backend.catalog;
    let waiting = catalog.opening(&event, Some(&fanclub)).await.unwrap();
    let waiting = waiting.expect("the channel's opening");
    assert_eq!(
        (waiting.sale_starts_at, waiting.prequeued),
        (channel_starts, 5)
    );
    let own = catalog.opening(&event, None).await.unwrap().unwrap();
    assert_eq!((own.sale_starts_at, own.prequeued), (event_starts, 1));
    let pending = f.backend.jobs.job(fans[1].job_id).await.unwrap().unwrap();
    let line = f.backend.jobs.line(&pending).await.unwrap();
    assert_eq!(line.opens_at, Some(channel_starts));
    assert_eq!(
        receive_all(&f).await,
        [],
        "nothing before the channel's start"
    );
    // The claim's own rule: a channel intent decided before its start takes nothing.
    assert_rejected(&decided(&f, &fans[4]).await, ReasonCode::ChannelNotOpen);

    f.clock
        .advance(channel_starts.duration_since(f.backend.clock.now()));
    let received = receive_all(&f).await;
    let draw = catalog.opening(&event, Some(&fanclub)).await.unwrap();
    let draw = draw
        .and_then(|o| o.draw)
        .expect("drawn at the channel's start");
    eprintln!("seed {}", draw.seed);
    assert_eq!((draw.channel.as_ref(), draw.shuffled), (Some(&fanclub), 5));
    let mut order: Vec<_> = fans.iter().map(|intent| intent.job_id).collect();
    shuffle(&Seed::parse(&draw.seed).unwrap(), &mut order);
    assert_eq!(
        received, order,
        "the channel's pre-queue alone, in its drawn order"
    );
    assert_eq!(digest(&order), draw.digest);
    let own = catalog.opening(&event, None).await.unwrap().unwrap();
    assert_eq!(own.draw, None, "the public still waits");
    for fan in &fans[..4] {
        assert_eq!(decided(&f, fan).await.status, JobStatus::Held);
    }
    assert_eq!(catalog.unpublished_openings().await.unwrap(), [draw]);
    app::relay_once(&f.backend).await.unwrap();
    assert_eq!(catalog.unpublished_openings().await.unwrap(), []);
    let (late_fan, admission) = admit(&f, &event, "late-fan", "F", Some(&hash)).await;
    assert_eq!(
        admission,
        Admission::Accepted(late_fan.job_id),
        "the channel is open"
    );

    f.clock
        .advance(event_starts.duration_since(f.backend.clock.now()));
    let received = receive_all(&f).await;
    assert!(received.contains(&public.job_id), "{received:?}");
    let own = catalog.opening(&event, None).await.unwrap().unwrap();
    assert_eq!(own.draw.map(|d| (d.channel, d.shuffled)), Some((None, 1)));
}
