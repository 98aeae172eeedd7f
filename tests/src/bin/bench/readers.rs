//! `readers`: buyers looking at a seat map the way the web page does, each asking every
//! `interval` with the tag of the map it has (`If-None-Match`), so an unchanged map costs a 304,
//! and accepting gzip, as every browser does. A read the API sheds (503) is counted apart.
//! The paced storm the read-path benchmark measures reservations under, beside wrk's
//! closed-loop one (which on one machine mostly measures how fast wrk can take the CPU).

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

/// What the readers got.
#[derive(Default)]
struct Counts {
    ok: u64,
    not_modified: u64,
    shed: u64,
    errors: u64,
}

/// Runs `readers` paced readers of `url` for `duration` and prints their counts as JSON.
pub async fn run(
    url: String,
    readers: usize,
    interval: Duration,
    duration: Duration,
) -> anyhow::Result<()> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(readers)
        .build()?;
    let until = Instant::now() + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..readers {
        let (client, url) = (client.clone(), url.clone());
        // Spread over the interval, as buyers arrive at different moments.
        let offset = interval.mul_f64(n as f64 / readers as f64);
        tasks.spawn(async move { read(&client, &url, offset, interval, until).await });
    }
    let mut total = Counts::default();
    while let Some(counts) = tasks.join_next().await {
        let counts = counts?;
        total.ok += counts.ok;
        total.not_modified += counts.not_modified;
        total.shed += counts.shed;
        total.errors += counts.errors;
    }
    let seconds = duration.as_secs_f64();
    let requests = total.ok + total.not_modified + total.shed + total.errors;
    println!(
        "{}",
        json!({"readers": readers, "interval_ms": interval.as_millis() as u64, "requests": requests,
               "requests_per_sec": requests as f64 / seconds, "ok": total.ok,
               "not_modified": total.not_modified, "shed": total.shed, "errors": total.errors})
    );
    Ok(())
}

async fn read(
    client: &reqwest::Client,
    url: &str,
    offset: Duration,
    interval: Duration,
    until: Instant,
) -> Counts {
    let mut counts = Counts::default();
    let mut etag: Option<String> = None;
    let mut next = Instant::now() + offset;
    while next < until {
        tokio::time::sleep_until(next.into()).await;
        next += interval;
        let mut request = client.get(url).header("accept-encoding", "gzip");
        if let Some(tag) = &etag {
            request = request.header("if-none-match", tag);
        }
        match request.send().await {
            Ok(reply) if reply.status() == StatusCode::NOT_MODIFIED => counts.not_modified += 1,
            Ok(reply) if reply.status() == StatusCode::SERVICE_UNAVAILABLE => counts.shed += 1,
            Ok(reply) if reply.status().is_success() => {
                etag = reply
                    .headers()
                    .get("etag")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                // Read the body, as the page does.
                match reply.bytes().await {
                    Ok(_) => counts.ok += 1,
                    Err(_) => counts.errors += 1,
                }
            }
            _ => counts.errors += 1,
        }
    }
    counts
}
