//! `peer-redis`: seatclaim's contract subset decided by one Lua script per operation on Redis
//! (run it with `appendonly yes`, `appendfsync always`: every answer follows an fsync), over one
//! multiplexed, pipelined connection.

use std::collections::HashMap;

use anyhow::{Context, bail};
use clap::Parser;
use jiff::Timestamp;
use redis::Script;
use redis::aio::MultiplexedConnection;
use seatclaim_bench_peers::{
    Action, Job, NewEvent, Reservation, Reserved, SeatRequest, SeatView, SectionSpec, Settled,
    Store, http,
};
use uuid::Uuid;

/// Benchmark peer on Redis.
#[derive(Debug, Parser)]
struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:28101")]
    listen: String,
    /// The Redis server.
    #[arg(long, default_value = "redis://127.0.0.1:26380/")]
    redis: String,
}

/// The store: the connection (clones share its pipeline) and the scripts (run by EVALSHA,
/// loaded on a NOSCRIPT).
struct RedisStore {
    con: MultiplexedConnection,
    create: Script,
    reserve: Script,
    settle: Script,
}

/// A job from a script's `{outcome, job_id, event, buyer, status, seats, expires_ms, reason}`.
fn job_of(reply: &[String]) -> anyhow::Result<Job> {
    let [_, id, event, buyer, status, seats, expires, reason] = reply else {
        bail!("unexpected script reply {reply:?}");
    };
    let hold_expires_at = match expires.as_str() {
        "" => None,
        ms => Some(Timestamp::from_millisecond(ms.parse()?)?),
    };
    Ok(Job {
        job_id: Uuid::parse_str(id)?,
        event_id: event.clone(),
        buyer_id: buyer.clone(),
        status: status.clone(),
        seat_ids: seats
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        hold_expires_at,
        reason: Some(reason.clone()).filter(|r| !r.is_empty()),
    })
}

fn now_ms() -> i64 {
    Timestamp::now().as_millisecond()
}

impl Store for RedisStore {
    async fn create_event(&self, event: &NewEvent) -> anyhow::Result<bool> {
        let meta = format!("ev:{}", event.event_id);
        let mut call = self.create.key(&meta);
        call.key(format!("{meta}:seat"))
            .arg(u64::from(event.hold_seconds) * 1000)
            .arg(&event.name)
            .arg(serde_json::to_string(&event.sections)?);
        for s in &event.sections {
            call.arg(&s.section).arg(s.rows).arg(s.seats_per_row);
        }
        let created: i64 = call.invoke_async(&mut self.con.clone()).await?;
        Ok(created == 1)
    }

    async fn seat_map(&self, event_id: &str) -> anyhow::Result<Option<Vec<SeatView>>> {
        let meta = format!("ev:{event_id}");
        let (layout, states): (Option<String>, HashMap<String, String>) = redis::pipe()
            .atomic()
            .hget(&meta, "layout")
            .hgetall(format!("{meta}:seat"))
            .query_async(&mut self.con.clone())
            .await?;
        let Some(layout) = layout else {
            return Ok(None);
        };
        let sections: Vec<SectionSpec> = serde_json::from_str(&layout)?;
        let event = NewEvent {
            event_id: event_id.into(),
            name: String::new(),
            hold_seconds: 1,
            sections,
            max_seats_per_buyer: 0,
        };
        let now = now_ms();
        let seats = event.seats().map(|(seat_id, section)| {
            let state = states.get(&seat_id).context("a seat without a state")?;
            let state = match state.split('|').collect::<Vec<_>>()[..] {
                ["S", _] => "SOLD",
                ["H", _, expires] if expires.parse::<i64>()? > now => "HELD",
                _ => "AVAILABLE",
            };
            Ok(SeatView {
                seat_id,
                section: section.into(),
                state: state.into(),
            })
        });
        Ok(Some(seats.collect::<anyhow::Result<_>>()?))
    }

    async fn reserve(&self, r: &Reservation) -> anyhow::Result<Reserved> {
        let meta = format!("ev:{}", r.event_id);
        let mut call = self.reserve.key(&meta);
        call.key(format!("{meta}:seat"))
            .key(format!("{meta}:holds"))
            .key(format!("idem:{}", r.key))
            .key(format!("job:{}", r.job_id))
            .arg(now_ms())
            .arg(r.job_id.to_string())
            .arg(&r.event_id)
            .arg(&r.buyer_id)
            .arg(&r.fingerprint);
        match &r.request {
            SeatRequest::Seats(ids) => call.arg("seats").arg(ids),
            SeatRequest::Section { section, quantity } => {
                call.arg("section").arg(section).arg(*quantity)
            }
        };
        let reply: Vec<String> = call.invoke_async(&mut self.con.clone()).await?;
        Ok(match reply.first().map(String::as_str) {
            Some("NEW" | "DUP") => Reserved::Job(job_of(&reply)?),
            Some("NO_EVENT") => Reserved::UnknownEvent,
            Some("REUSED") => Reserved::KeyReused,
            Some("UNKNOWN") => Reserved::Unknown(reply.get(1).cloned().unwrap_or_default()),
            _ => bail!("unexpected reserve reply {reply:?}"),
        })
    }

    async fn job(&self, job_id: Uuid) -> anyhow::Result<Option<Job>> {
        let fields: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(format!("job:{job_id}"))
            .arg(&["event", "buyer", "status", "seats", "exp", "reason"])
            .query_async(&mut self.con.clone())
            .await?;
        if fields.first().is_none_or(Option::is_none) {
            return Ok(None);
        }
        let mut reply = vec![String::new(), job_id.to_string()];
        reply.extend(fields.into_iter().map(Option::unwrap_or_default));
        Ok(Some(job_of(&reply)?))
    }

    async fn settle(&self, job_id: Uuid, action: Action) -> anyhow::Result<Settled> {
        let reply: Vec<String> = self
            .settle
            .key(format!("job:{job_id}"))
            .arg(now_ms())
            .arg(if action == Action::Confirm {
                "confirm"
            } else {
                "cancel"
            })
            .arg(job_id.to_string())
            .invoke_async(&mut self.con.clone())
            .await?;
        Ok(match reply.first().map(String::as_str) {
            Some("DONE") => Settled::Done(job_of(&reply)?),
            Some("CONFLICT") => Settled::Conflict(job_of(&reply)?),
            Some("NOT_FOUND") => Settled::NotFound,
            _ => bail!("unexpected settle reply {reply:?}"),
        })
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let client = redis::Client::open(cli.redis.as_str())?;
    let con = client
        .get_multiplexed_async_connection()
        .await
        .with_context(|| format!("cannot connect to {}", cli.redis))?;
    let store = RedisStore {
        con,
        create: Script::new(include_str!("create.lua")),
        reserve: Script::new(include_str!("reserve.lua")),
        settle: Script::new(include_str!("settle.lua")),
    };
    http::serve(&cli.listen, store).await
}
