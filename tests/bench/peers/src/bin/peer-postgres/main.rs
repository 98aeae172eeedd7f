//! `peer-postgres`: seatclaim's contract subset decided by PostgreSQL (run it with `fsync=on`,
//! `synchronous_commit=on`): each operation is one call of a plpgsql function (`schema.sql`),
//! so one round trip and one durable transaction, over a round-robin pool of connections with
//! their statements prepared once.

use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, bail};
use clap::Parser;
use seatclaim_bench_peers::{
    Action, Job, NewEvent, Reservation, Reserved, SeatRequest, SeatView, Settled, Store, http,
};
use tokio_postgres::{Client, NoTls, Row, Statement};
use uuid::Uuid;

/// Benchmark peer on PostgreSQL.
#[derive(Debug, Parser)]
struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:28102")]
    listen: String,
    /// The PostgreSQL server, as a libpq-style connection string.
    #[arg(
        long,
        default_value = "host=/tmp port=25433 user=postgres dbname=postgres"
    )]
    postgres: String,
    /// How many connections.
    #[arg(long, default_value_t = 16)]
    pool: usize,
}

/// One connection and its prepared statements.
struct Conn {
    client: Client,
    create: Statement,
    seats: Statement,
    event_exists: Statement,
    reserve: Statement,
    job: Statement,
    settle: Statement,
}

impl Conn {
    async fn open(config: &str) -> anyhow::Result<Self> {
        let (client, connection) = tokio_postgres::connect(config, NoTls)
            .await
            .with_context(|| format!("cannot connect to {config}"))?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                eprintln!("postgres connection lost: {error}");
            }
        });
        // Every statement's plan is fixed by the indexes (see schema.sql): plan once per
        // connection rather than again at each call, inside the functions too.
        client
            .batch_execute("SET plan_cache_mode = force_generic_plan")
            .await?;
        Ok(Self {
            create: client
                .prepare("SELECT create_event($1, $2, $3, $4, $5, $6)")
                .await?,
            seats: client
                .prepare(
                    "SELECT seat_id, section, CASE WHEN state = 'HELD' AND hold_until <= now() \
                     THEN 'AVAILABLE' ELSE state END FROM seats WHERE event_id = $1 ORDER BY ord",
                )
                .await?,
            event_exists: client
                .prepare("SELECT 1 FROM events WHERE event_id = $1")
                .await?,
            reserve: client
                .prepare("SELECT * FROM reserve($1, $2, $3, $4, $5, $6, $7, $8)")
                .await?,
            job: client
                .prepare(
                    "SELECT 'FOUND', job_id, event_id, buyer_id, status, seat_ids, \
                     hold_expires_at, reason FROM jobs WHERE job_id = $1",
                )
                .await?,
            settle: client.prepare("SELECT * FROM settle($1, $2)").await?,
            client,
        })
    }
}

/// The pool: requests take connections in turn (each pipelines what it is given).
struct PgStore {
    conns: Vec<Conn>,
    next: AtomicUsize,
}

impl PgStore {
    fn conn(&self) -> &Conn {
        &self.conns[self.next.fetch_add(1, Ordering::Relaxed) % self.conns.len()]
    }
}

/// The outcome and the job of a `job_reply` row.
fn reply(row: &Row) -> anyhow::Result<(String, Option<Job>)> {
    let outcome: String = row.try_get(0)?;
    let Some(job_id) = row.try_get::<_, Option<Uuid>>(1)? else {
        return Ok((outcome, None));
    };
    let job = Job {
        job_id,
        event_id: row.try_get(2)?,
        buyer_id: row.try_get(3)?,
        status: row.try_get(4)?,
        seat_ids: row.try_get(5)?,
        hold_expires_at: row.try_get(6)?,
        reason: row.try_get(7)?,
    };
    Ok((outcome, Some(job)))
}

impl Store for PgStore {
    async fn create_event(&self, event: &NewEvent) -> anyhow::Result<bool> {
        let names: Vec<&str> = event.sections.iter().map(|s| &*s.section).collect();
        let rows = event.sections.iter().map(|s| i32::try_from(s.rows));
        let rows = rows.collect::<Result<Vec<i32>, _>>()?;
        let per_row = event
            .sections
            .iter()
            .map(|s| i32::try_from(s.seats_per_row));
        let per_row = per_row.collect::<Result<Vec<i32>, _>>()?;
        let hold = i32::try_from(event.hold_seconds)?;
        let c = self.conn();
        let row = c
            .client
            .query_one(
                &c.create,
                &[&event.event_id, &event.name, &hold, &names, &rows, &per_row],
            )
            .await?;
        let created = row.try_get(0)?;
        if created {
            // Statistics of the new seats, so that plans pick the right index from the start.
            c.client.batch_execute("ANALYZE seats").await?;
        }
        Ok(created)
    }

    async fn seat_map(&self, event_id: &str) -> anyhow::Result<Option<Vec<SeatView>>> {
        let c = self.conn();
        let rows = c.client.query(&c.seats, &[&event_id]).await?;
        if rows.is_empty()
            && c.client
                .query_opt(&c.event_exists, &[&event_id])
                .await?
                .is_none()
        {
            return Ok(None);
        }
        let seats = rows.iter().map(|row| {
            Ok(SeatView {
                seat_id: row.try_get(0)?,
                section: row.try_get(1)?,
                state: row.try_get(2)?,
            })
        });
        Ok(Some(seats.collect::<anyhow::Result<_>>()?))
    }

    async fn reserve(&self, r: &Reservation) -> anyhow::Result<Reserved> {
        let (seats, section, quantity) = match &r.request {
            SeatRequest::Seats(ids) => (Some(ids), None, None),
            SeatRequest::Section { section, quantity } => {
                (None, Some(section), Some(i32::from(*quantity)))
            }
        };
        let c = self.conn();
        let row = c
            .client
            .query_one(
                &c.reserve,
                &[
                    &r.event_id,
                    &r.key,
                    &r.job_id,
                    &r.buyer_id,
                    &r.fingerprint,
                    &seats,
                    &section,
                    &quantity,
                ],
            )
            .await?;
        Ok(match reply(&row)? {
            (o, Some(job)) if o == "NEW" || o == "DUP" => Reserved::Job(job),
            (o, _) if o == "NO_EVENT" => Reserved::UnknownEvent,
            (o, _) if o == "REUSED" => Reserved::KeyReused,
            (o, _) if o == "UNKNOWN" => {
                Reserved::Unknown(row.try_get::<_, Option<String>>(7)?.unwrap_or_default())
            }
            (o, _) => bail!("unexpected reserve outcome {o}"),
        })
    }

    async fn job(&self, job_id: Uuid) -> anyhow::Result<Option<Job>> {
        let c = self.conn();
        match c.client.query_opt(&c.job, &[&job_id]).await? {
            Some(row) => Ok(reply(&row)?.1),
            None => Ok(None),
        }
    }

    async fn settle(&self, job_id: Uuid, action: Action) -> anyhow::Result<Settled> {
        let target = if action == Action::Confirm {
            "SOLD"
        } else {
            "CANCELLED"
        };
        let c = self.conn();
        let row = c.client.query_one(&c.settle, &[&job_id, &target]).await?;
        Ok(match reply(&row)? {
            (o, Some(job)) if o == "DONE" => Settled::Done(job),
            (o, Some(job)) if o == "CONFLICT" => Settled::Conflict(job),
            (o, _) if o == "NOT_FOUND" => Settled::NotFound,
            (o, _) => bail!("unexpected settle outcome {o}"),
        })
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let (first, _) = tokio_postgres::connect(&cli.postgres, NoTls)
        .await
        .map(|(client, connection)| (client, tokio::spawn(connection)))
        .with_context(|| format!("cannot connect to {}", cli.postgres))?;
    first
        .batch_execute(include_str!("schema.sql"))
        .await
        .context("cannot create the schema")?;
    drop(first);
    let mut conns = Vec::with_capacity(cli.pool);
    for _ in 0..cli.pool.max(1) {
        conns.push(Conn::open(&cli.postgres).await?);
    }
    let store = PgStore {
        conns,
        next: AtomicUsize::new(0),
    };
    http::serve(&cli.listen, store).await
}
