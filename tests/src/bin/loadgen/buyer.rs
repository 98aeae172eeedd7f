//! One simulated buyer's journey, and what all buyers share: the target, the seats, the tallies.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use hdrhistogram::Histogram;
use serde_json::{Value, json};

use super::Cli;
use super::token::Signer;

/// Shares (out of their sum) of exact single-seat, exact multi-seat and any-in-section requests.
#[derive(Debug, Clone, Copy)]
pub struct Mix {
    exact: u32,
    multi: u32,
    section: u32,
}

impl Mix {
    /// Parses `exact,multi,section`, e.g. `60,20,20`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let parts: Vec<u32> = text
            .split(',')
            .map(|p| p.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        match parts[..] {
            [exact, multi, section] if exact + multi + section > 0 => Ok(Self {
                exact,
                multi,
                section,
            }),
            _ => Err("expected three shares, exact,multi,section, not all zero".into()),
        }
    }
}

/// A seat as the load generator knows it.
#[derive(Debug, Clone)]
pub struct Seat {
    id: String,
    section: String,
    /// As the seat map showed it when read.
    state: String,
}

/// Everything the buyers share.
pub struct Shared {
    client: reqwest::Client,
    /// The service's base URL, without a trailing slash, for the reads around the run.
    url: String,
    /// The same, parsed once: each buyer's request URL is this one with its path and query set,
    /// which parses neither scheme nor host again (parsing the whole URL per request took a
    /// tenth of the load generator's CPU).
    base: reqwest::Url,
    event_id: String,
    seats: Vec<Seat>,
    sections: Vec<String>,
    mix: Mix,
    hot_share: f64,
    hot_seats: usize,
    confirm: f64,
    cancel: f64,
    /// `Prefer: wait` seconds sent on every reservation (`--prefer-wait`).
    pub(crate) prefer_wait: Option<u64>,
    run: String,
    /// Signs each buyer's token when the service has authentication on.
    signer: Option<Signer>,
    started: Instant,
    pub(crate) admitted: AtomicU64,
    pub(crate) decided: AtomicU64,
    /// HTTP requests sent to reach decisions: reservation POSTs and status GETs.
    pub(crate) requests: AtomicU64,
    pub(crate) latency_us: Mutex<Histogram<u64>>,
    pub(crate) timeline: Mutex<Vec<(f64, f64)>>,
    pub(crate) outcomes: Mutex<BTreeMap<String, u64>>,
    pub(crate) http_errors: Mutex<BTreeMap<String, u64>>,
    finals: Mutex<Vec<(String, String, Vec<String>)>>,
}

impl Shared {
    pub(crate) fn new(
        client: reqwest::Client,
        base: reqwest::Url,
        event_id: String,
        seats: Vec<Seat>,
        signer: Option<Signer>,
        cli: &Cli,
    ) -> Self {
        let mut sections: Vec<String> = seats.iter().map(|s| s.section.clone()).collect();
        sections.sort();
        sections.dedup();
        Self {
            client,
            url: base.as_str().trim_end_matches('/').to_owned(),
            base,
            event_id,
            seats,
            sections,
            mix: cli.mix,
            hot_share: cli.hot_share,
            hot_seats: cli.hot_seats.max(1),
            confirm: cli.confirm,
            cancel: cli.cancel,
            prefer_wait: cli.prefer_wait,
            run: uuid::Uuid::new_v4().simple().to_string(),
            signer,
            started: Instant::now(),
            admitted: AtomicU64::new(0),
            decided: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            latency_us: Mutex::new(
                Histogram::new_with_bounds(1, 600_000_000, 3).expect("histogram bounds"),
            ),
            timeline: Mutex::new(Vec::new()),
            outcomes: Mutex::new(BTreeMap::new()),
            http_errors: Mutex::new(BTreeMap::new()),
            finals: Mutex::new(Vec::new()),
        }
    }

    /// The service's URL of `path` (under the base URL's own path, if it has one), with `query`
    /// if given.
    fn at(&self, path: &str, query: Option<&str>) -> reqwest::Url {
        let mut url = self.base.clone();
        url.set_path(&format!("{}{path}", self.base.path().trim_end_matches('/')));
        url.set_query(query);
        url
    }

    /// One line for the progress bar.
    pub(crate) fn summary(&self, elapsed: Duration) -> String {
        let secs = elapsed.as_secs_f64().max(0.001);
        let admitted = self.admitted.load(Ordering::Relaxed);
        let decided = self.decided.load(Ordering::Relaxed);
        format!(
            "admitted {admitted} ({:.0}/s), decided {decided} ({:.0}/s)",
            admitted as f64 / secs,
            decided as f64 / secs
        )
    }

    fn error(&self, what: String) {
        *self
            .http_errors
            .lock()
            .expect("lock")
            .entry(what)
            .or_default() += 1;
    }
}

/// One buyer.
pub struct Buyer {
    shared: std::sync::Arc<Shared>,
    n: u64,
    id: String,
    /// This buyer's bearer token, when the service has authentication on.
    token: Option<String>,
}

impl Buyer {
    pub(crate) fn new(shared: std::sync::Arc<Shared>, n: u64) -> anyhow::Result<Self> {
        let id = format!("lg-{}-{n}", &shared.run[..8]);
        let token = shared.signer.as_ref().map(|s| s.buyer(&id)).transpose()?;
        Ok(Self {
            shared,
            n,
            id,
            token,
        })
    }

    /// `request` with this buyer's token, if there is one.
    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    fn request(&self) -> Value {
        let s = &self.shared;
        let buyer = &self.id;
        let pick = || {
            if fastrand::f64() < s.hot_share {
                fastrand::usize(0..s.hot_seats.min(s.seats.len()))
            } else {
                fastrand::usize(0..s.seats.len())
            }
        };
        let roll = fastrand::u32(0..s.mix.exact + s.mix.multi + s.mix.section);
        if roll < s.mix.exact {
            json!({"buyer_id": buyer, "seat_ids": [s.seats[pick()].id]})
        } else if roll < s.mix.exact + s.mix.multi {
            let first = pick();
            let count = fastrand::usize(2..=3);
            let ids: Vec<&str> = (0..count)
                .map(|k| s.seats[(first + k) % s.seats.len()].id.as_str())
                .collect();
            json!({"buyer_id": buyer, "seat_ids": ids})
        } else {
            let section = &s.sections[fastrand::usize(0..s.sections.len())];
            json!({"buyer_id": buyer, "section": section, "quantity": fastrand::u8(1..=3)})
        }
    }

    /// POST, poll to a decision, maybe confirm or cancel; every step is tallied.
    pub(crate) async fn run(self) {
        let s = &self.shared;
        let posted_at = Instant::now();
        let Some(job) = self.reserve().await else {
            return;
        };
        let waited = posted_at.elapsed();
        s.decided.fetch_add(1, Ordering::Relaxed);
        let _ = s
            .latency_us
            .lock()
            .expect("lock")
            .record(u64::try_from(waited.as_micros()).unwrap_or(u64::MAX).max(1));
        s.timeline.lock().expect("lock").push((
            s.started.elapsed().as_secs_f64(),
            waited.as_secs_f64() * 1_000.0,
        ));
        let mut status = job["status"].as_str().unwrap_or("?").to_owned();
        *s.outcomes
            .lock()
            .expect("lock")
            .entry(status.clone())
            .or_default() += 1;
        let job_id = job["job_id"].as_str().unwrap_or_default();
        if status == "HELD" {
            let roll = fastrand::f64();
            let action = if roll < s.confirm {
                Some("confirm")
            } else if roll < s.confirm + s.cancel {
                Some("cancel")
            } else {
                None
            };
            if let Some(action) = action {
                match self
                    .authorized(
                        s.client
                            .post(s.at(&format!("/v1/jobs/{job_id}/{action}"), None)),
                    )
                    .send()
                    .await
                {
                    Ok(r) if r.status().is_success() => {
                        status = if action == "confirm" {
                            "SOLD".into()
                        } else {
                            "CANCELLED".into()
                        };
                        *s.outcomes
                            .lock()
                            .expect("lock")
                            .entry(status.clone())
                            .or_default() += 1;
                    }
                    Ok(r) => s.error(r.status().as_u16().to_string()),
                    Err(_) => s.error("transport".into()),
                }
            }
        }
        let seats = job["seat_ids"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        s.finals.lock().expect("lock").push((
            job["job_id"].as_str().unwrap_or_default().to_owned(),
            status,
            seats,
        ));
    }

    /// Sends the reservation and follows it to its decision: the POST's own answer when it is a
    /// 200 with a decided job (`--prefer-wait`), else the status URL's polls.
    async fn reserve(&self) -> Option<Value> {
        let s = &self.shared;
        let key = format!("lg-{}-{}", s.run, self.n);
        let mut request = self
            .authorized(
                s.client
                    .post(s.at(&format!("/v1/events/{}/reservations", s.event_id), None)),
            )
            .header("Idempotency-Key", key)
            .json(&self.request());
        if let Some(seconds) = s.prefer_wait {
            request = request.header("Prefer", format!("wait={seconds}"));
        }
        s.requests.fetch_add(1, Ordering::Relaxed);
        let response = match request.send().await {
            Ok(response) if matches!(response.status().as_u16(), 200 | 202) => response,
            Ok(response) => {
                s.error(response.status().as_u16().to_string());
                return None;
            }
            Err(error) => {
                s.error(
                    if error.is_connect() {
                        "connect"
                    } else {
                        "transport"
                    }
                    .into(),
                );
                return None;
            }
        };
        s.admitted.fetch_add(1, Ordering::Relaxed);
        let decided_in_answer = response.status().as_u16() == 200;
        let Ok(answer) = response.json::<Value>().await else {
            s.error("bad POST body".into());
            return None;
        };
        // Only a 200 carries the job itself; a 202 names it, whatever status it mentions.
        if decided_in_answer && answer["status"].as_str().is_some_and(|s| s != "PENDING") {
            return Some(answer);
        }
        let Some(job_id) = answer["job_id"].as_str() else {
            s.error("bad POST body".into());
            return None;
        };
        self.decision(&format!("/v1/jobs/{job_id}")).await
    }

    /// Polls until the job leaves PENDING, long-polling where the service supports it.
    async fn decision(&self, status_url: &str) -> Option<Value> {
        let s = &self.shared;
        let mut pause = Duration::from_millis(5);
        for _ in 0..2_000 {
            s.requests.fetch_add(1, Ordering::Relaxed);
            match self
                .authorized(s.client.get(s.at(status_url, Some("wait=5"))))
                .send()
                .await
            {
                Ok(r) if r.status().is_success() => {
                    let job: Value = r.json().await.ok()?;
                    if job["status"] != "PENDING" {
                        return Some(job);
                    }
                }
                Ok(r) => s.error(r.status().as_u16().to_string()),
                Err(_) => s.error("transport".into()),
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(250));
        }
        s.error("never decided".into());
        None
    }
}

/// Creates a fresh event of `seats` seats in sections of up to 1,000, with long holds.
/// `signer`, when the service has authentication on, signs the admin token that needs.
pub(crate) async fn create_event(
    client: &reqwest::Client,
    url: &str,
    seats: u32,
    signer: Option<&Signer>,
) -> anyhow::Result<(String, Vec<Seat>)> {
    let event_id = format!("lg-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let sections: Vec<Value> = (0..seats.div_ceil(1_000))
        .map(|i| json!({"section": format!("S{i}"), "rows": (seats - i * 1_000).min(1_000).div_ceil(20), "seats_per_row": 20}))
        .collect();
    let mut request = client.post(format!("{url}/v1/events"));
    if let Some(signer) = signer {
        request = request.bearer_auth(signer.admin()?);
    }
    let response = request
        // No per-buyer limit (0): the numbers stay comparable with runs before the default.
        .json(
            &json!({"event_id": event_id, "name": "load test", "hold_seconds": 3_600,
                      "max_seats_per_buyer": 0, "sections": sections}),
        )
        .send()
        .await
        .context("cannot reach the service")?;
    if !response.status().is_success() {
        bail!(
            "creating the event failed: {} {}",
            response.status(),
            response.text().await.unwrap_or_default()
        );
    }
    let seats = read_seats(client, url, &event_id).await?;
    Ok((event_id, seats))
}

/// The seats of an event and their states, from its seat map.
pub(crate) async fn read_seats(
    client: &reqwest::Client,
    url: &str,
    event_id: &str,
) -> anyhow::Result<Vec<Seat>> {
    Ok(seats_of(&read_map(client, url, event_id).await?))
}

/// The event's seat map; a read the API sheds (503, its read budget spent by a storm of
/// readers) is asked again after its `Retry-After`, as a page would.
async fn read_map(client: &reqwest::Client, url: &str, event_id: &str) -> anyhow::Result<Value> {
    let mut shed = 0;
    loop {
        let response = client
            .get(format!("{url}/v1/events/{event_id}/seats"))
            .send()
            .await?;
        if response.status() == reqwest::StatusCode::SERVICE_UNAVAILABLE && shed < 60 {
            shed += 1;
            let after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|value| value.to_str().ok()?.parse().ok())
                .unwrap_or(1);
            tokio::time::sleep(std::time::Duration::from_secs(after)).await;
            continue;
        }
        return Ok(response.error_for_status()?.json().await?);
    }
}

fn seats_of(map: &Value) -> Vec<Seat> {
    map["seats"]
        .as_array()
        .map(|seats| {
            seats
                .iter()
                .map(|s| Seat {
                    id: s["seat_id"].as_str().unwrap_or_default().into(),
                    section: s["section"].as_str().unwrap_or_default().into(),
                    state: s["state"].as_str().unwrap_or_default().into(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The seat map as rebuilt after this call began: the API answers from a snapshot up to
/// `SEATCLAIM_SEAT_MAP_MAX_AGE_MS` old, so the first answer may predate the run's last
/// decisions; a snapshot with a later `as_of` than that answer's was read after it.
async fn read_seats_after_now(shared: &Shared) -> anyhow::Result<Vec<Seat>> {
    let (client, url, event) = (&shared.client, &shared.url, &shared.event_id);
    let first = read_map(client, url, event).await?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let map = read_map(client, url, event).await?;
        if map["as_of"] != first["as_of"] {
            return Ok(seats_of(&map));
        }
        if Instant::now() > deadline {
            bail!("the seat map of {event} was not rebuilt within 30 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// No seat is held or sold by two of this run's jobs, and every seat this run's jobs hold or
/// bought shows so on the seat map. Returns what is wrong.
pub(crate) async fn check_invariants(shared: &Shared) -> anyhow::Result<Vec<String>> {
    let map = read_seat_states(shared).await?;
    let mut owners: HashMap<String, String> = HashMap::new();
    let mut problems = Vec::new();
    for (job, status, seats) in shared.finals.lock().expect("lock").iter() {
        if status != "HELD" && status != "SOLD" {
            continue;
        }
        for seat in seats {
            if let Some(other) = owners.insert(seat.clone(), job.clone()) {
                problems.push(format!("seat {seat} is held by jobs {other} and {job}"));
            }
            let shown = map.get(seat).map_or("missing", String::as_str);
            if shown != status {
                problems.push(format!("seat {seat} of {status} job {job} shows {shown}"));
            }
        }
    }
    let taken: HashSet<&String> = map
        .iter()
        .filter(|(_, state)| *state != "AVAILABLE")
        .map(|(seat, _)| seat)
        .collect();
    let ours: HashSet<&String> = owners.keys().collect();
    if taken.len() > ours.len() && shared.seats.len() == map.len() {
        problems.push(format!(
            "the seat map shows {} seats taken, but this run's jobs own {}",
            taken.len(),
            ours.len()
        ));
    }
    Ok(problems)
}

async fn read_seat_states(shared: &Shared) -> anyhow::Result<HashMap<String, String>> {
    let seats = read_seats_after_now(shared).await?;
    Ok(seats
        .into_iter()
        .map(|seat| (seat.id, seat.state))
        .collect())
}
