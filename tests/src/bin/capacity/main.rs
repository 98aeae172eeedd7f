//! `seatclaim-capacity`: the AWS backend's capacity model, measured. Runs the real AWS adapters
//! against the local emulators (DynamoDB Local and moto, as `tests/emulator/start.sh` starts
//! them) behind a proxy whose ledger books every DynamoDB request's consumed units by table,
//! index and partition-key value, then scales the figures to the target sale and prices them.
//!
//! Two runs:
//! 1. **Keys**: an event of the target's full size (100,000 seats), and the first `--slice`
//!    buyers of the sale with the target's mix. The event's keys (a seat item each, its blocks,
//!    its sections' free-list shards) and the fixed shards are all there as in the real sale,
//!    so each key's share of the traffic is the real one; the first buyers are the sale's most
//!    write-heavy part (most of them get a seat).
//! 2. **Sale**: a whole sale at a smaller size (`--sale-seats`, ten buyers a seat), every hold
//!    confirmed: requests, units and CPU per reservation at 10x oversubscription.
//!
//! `bash tests/capacity/run.sh` runs it with the emulators and writes `deploy/capacity.json`.

mod expressions;
mod ledger;
mod model;
mod opening;
mod presale;
mod presale_phase;
mod sale;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use aws_config::BehaviorVersion;
use clap::Parser;
use seatclaim_aws::{AwsNames, table_specs};
use seatclaim_core::ports::SystemClock;
use seatclaim_e2e::emulator::{emulator_config, fresh_settings, provision};
use seatclaim_e2e::request_log::RequestLog;
use seatclaim_runtime::config::AwsSettings;

use ledger::{Ledger, TableKeys};
use sale::{Relays, Sale};

/// Measures the AWS backend's capacity model against the local emulators.
#[derive(Debug, Parser)]
struct Cli {
    /// Intents per second of the target sale (1,000,000 buyers in a minute).
    #[arg(long, default_value_t = 16_700.0)]
    rate: f64,
    /// Seats of the target event (run 1 creates an event this size).
    #[arg(long, default_value_t = 100_000)]
    seats: u32,
    /// Sections of each event.
    #[arg(long, default_value_t = 10)]
    sections: u32,
    /// Buyers of run 1: the first ones of the target sale.
    #[arg(long, default_value_t = 10_000)]
    slice: usize,
    /// Seats of run 2's whole sale (ten buyers a seat).
    #[arg(long, default_value_t = 500)]
    sale_seats: u32,
    /// Share of buyers who want one of the hot seats.
    #[arg(long, default_value_t = 0.1)]
    hot_share: f64,
    /// How many hot seats.
    #[arg(long, default_value_t = 10)]
    hot_seats: u32,
    /// Claim loops per worker task (`SEATCLAIM_CLAIM_LOOPS`), as the runs use them.
    #[arg(long, default_value_t = 4)]
    loops: usize,
    /// Relays side by side in the runs (a backend instance each, as a worker process each).
    #[arg(long, default_value_t = 2)]
    relays: usize,
    /// A sale with a waitlist: section requests that find too few seats wait in line, and
    /// `--lapse-share` of the holds end unpaid and go to the line before the rest are bought.
    #[arg(long)]
    waitlist: bool,
    /// Section requests for 1 to 4 seats together (a block in one row, the best first) instead of
    /// one seat.
    #[arg(long)]
    together: bool,
    /// Share of holds that end unpaid, with `--waitlist`.
    #[arg(long, default_value_t = 0.1)]
    lapse_share: f64,
    /// Run 1 starts with a presale: the last two sections (a fifth of the seats) set aside for
    /// a channel, `--codes` codes of it, and the first half of the buyers claiming there under
    /// codes of their own, before the public half.
    #[arg(long)]
    presale: bool,
    /// Access codes of run 1's presale.
    #[arg(long, default_value_t = 100_000)]
    codes: usize,
    /// Instead of the two runs, an opening: this many buyers pre-queued for a sale, released by
    /// one worker at its start, scaled to 1,000,000 pre-queued intents.
    #[arg(long)]
    opening: Option<usize>,
    /// Seed of the buyers' choices.
    #[arg(long, env = "SEATCLAIM_TEST_SEED")]
    seed: Option<u64>,
    /// Where to write the JSON report.
    #[arg(long, default_value = "deploy/capacity.json")]
    out: std::path::PathBuf,
    /// The document whose report section (between its `<marker>: start` and `<marker>: end`
    /// comments) is replaced.
    #[arg(long, default_value = "docs/capacity.md")]
    document: std::path::PathBuf,
    /// The name of the report's markers in the document.
    #[arg(long, default_value = "capacity report")]
    marker: String,
}

/// Replaces what stands between the `marker` comments of `document` with `report`.
fn update_document(document: &std::path::Path, marker: &str, report: &str) -> anyhow::Result<()> {
    let (start_mark, end_mark) = (
        format!("<!-- {marker}: start -->\n"),
        format!("<!-- {marker}: end -->"),
    );
    let text = std::fs::read_to_string(document)
        .with_context(|| format!("cannot read {}", document.display()))?;
    let (Some(start), Some(end)) = (text.find(&start_mark), text.find(&end_mark)) else {
        anyhow::bail!("{} has no {marker} markers", document.display());
    };
    let updated = format!("{}{start_mark}{report}{}", &text[..start], &text[end..]);
    std::fs::write(document, updated)
        .with_context(|| format!("cannot write {}", document.display()))
}

fn table_keys(names: &AwsNames, prefix: &str) -> HashMap<String, TableKeys> {
    table_specs(names)
        .into_iter()
        .map(|spec| {
            let label = spec
                .name
                .strip_prefix(&format!("{prefix}-"))
                .unwrap_or(spec.name)
                .to_owned();
            let keys = TableKeys {
                label,
                hash: spec.hash.0.to_owned(),
                range: spec.range.as_ref().map(|r| r.0.to_owned()),
                indexes: spec
                    .indexes
                    .iter()
                    .map(|(index, hash, _)| ((*index).to_owned(), hash.0.to_owned()))
                    .collect(),
            };
            (spec.name.to_owned(), keys)
        })
        .collect()
}

/// Starts the counting proxy with the ledger on a runtime of its own, on threads named
/// [`sale::PROXY_THREAD`], so its CPU time stays out of the product's.
fn start_proxy(ledger: Arc<Ledger>) -> anyhow::Result<RequestLog> {
    let endpoint = |name: &str| std::env::var(name).unwrap_or_default();
    let (upstream, dynamodb) = (
        endpoint("AWS_ENDPOINT_URL"),
        endpoint("AWS_ENDPOINT_URL_DYNAMODB"),
    );
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(sale::PROXY_THREAD.into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name(sale::PROXY_THREAD)
                .enable_all()
                .build()
                .expect("a runtime for the proxy");
            runtime.block_on(async move {
                let log = RequestLog::observed(&upstream, Some(&dynamodb), Some(ledger)).await;
                let _ = sender.send(log);
                std::future::pending::<()>().await;
            });
        })?;
    receiver.recv().context("the proxy did not start")
}

/// The backend of `settings` (provisioned first) through the proxy, and `relays` more
/// instances of it for the relays (each worker process is one relay).
async fn backends_for(
    endpoint: &str,
    settings: &AwsSettings,
    relays: usize,
) -> anyhow::Result<(seatclaim_core::Backend, Relays)> {
    let direct = emulator_config().await;
    provision(&direct, settings, Duration::from_secs(60), 21).await;
    let watcher = seatclaim_e2e::emulator::open(
        &direct,
        settings,
        Duration::from_secs(60),
        Arc::new(SystemClock),
    )
    .await?;
    let counted = aws_config::defaults(BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .load()
        .await;
    let open = || {
        seatclaim_e2e::emulator::open(
            &counted,
            settings,
            Duration::from_secs(60),
            Arc::new(SystemClock),
        )
    };
    let backend = open().await?;
    let mut each = Vec::new();
    for _ in 0..relays {
        each.push(open().await?);
    }
    Ok((backend, Relays { each, watcher }))
}

/// The opening run alone (`--opening`): its report, written as the two runs' is.
async fn opening_only(
    cli: &Cli,
    (ledger, log): (&Ledger, &RequestLog),
    settings: &AwsSettings,
    buyers: usize,
    (rng, seed): (&mut fastrand::Rng, u64),
) -> anyhow::Result<()> {
    let direct = emulator_config().await;
    provision(&direct, settings, Duration::from_secs(60), 21).await;
    eprintln!("capacity: an opening of {buyers} pre-queued buyers");
    let measured = opening::run(&log.endpoint, settings, (ledger, log), buyers, rng).await?;
    let model = opening::model(&measured, cli.rate);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let report = serde_json::json!({
        "command": format!("bash tests/capacity/run.sh {}", args.join(" ")),
        "seed": seed,
        "opening": model,
    });
    std::fs::write(&cli.out, serde_json::to_string_pretty(&report)? + "\n")
        .with_context(|| format!("cannot write {}", cli.out.display()))?;
    let text = format!(
        "From `bash tests/capacity/run.sh {}` on {} (seed {seed}).\n\n{}",
        args.join(" "),
        jiff::Zoned::now().date(),
        opening::markdown(&report["opening"])
    );
    println!("{text}");
    update_document(&cli.document, &cli.marker, &text)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let seed = cli.seed.unwrap_or_else(|| fastrand::u64(..));
    eprintln!("capacity: seed {seed} (SEATCLAIM_TEST_SEED={seed} repeats the buyers' choices)");
    let mut rng = fastrand::Rng::with_seed(seed);
    let (keys_run, sale_run) = (fresh_settings(), fresh_settings());
    let mut tables = HashMap::new();
    for settings in [&keys_run, &sale_run] {
        tables.extend(table_keys(
            &AwsNames::from_settings(settings),
            &settings.aws_prefix,
        ));
    }
    let ledger = Arc::new(Ledger::new(tables));
    let log = start_proxy(Arc::clone(&ledger))?;
    if let Some(buyers) = cli.opening {
        return opening_only(&cli, (&ledger, &log), &keys_run, buyers, (&mut rng, seed)).await;
    }
    let shape = |seats: u32, buyers: usize, confirm: bool| Sale {
        seats,
        sections: cli.sections,
        buyers,
        hot_share: cli.hot_share,
        hot_seats: cli.hot_seats,
        loops: cli.loops,
        confirm,
        waitlist: cli.waitlist,
        lapse_share: cli.lapse_share,
        together: cli.together,
        presale: None,
        first_buyer: 0,
    };

    let mut keys_sale = Sale {
        presale: cli.presale.then_some(sale::Buyers::Public),
        ..shape(cli.seats, cli.slice, false)
    };
    let (backend, relays) = backends_for(&log.endpoint, &keys_run, cli.relays).await?;
    let event = sale::create_event(&backend, &keys_sale, "capacity").await?;
    let presale_phase = if cli.presale {
        let holders = cli.slice / 2;
        let ran = (&keys_sale, &event);
        let phase = presale_phase::run(
            (&backend, &relays),
            ran,
            (cli.codes, holders),
            (&ledger, &mut rng),
        )
        .await?;
        keys_sale.buyers -= holders;
        keys_sale.first_buyer = holders;
        Some(phase)
    } else {
        None
    };
    ledger.take();
    eprintln!(
        "capacity: run 1, {} buyers on {} seats",
        keys_sale.buyers, cli.seats
    );
    let first = sale::run(&backend, &relays, &keys_sale, &event, &mut rng).await?;
    let (keys, _) = ledger.take();
    eprintln!(
        "capacity: run 1 held {} and rejected {}",
        first.held, first.rejected
    );

    let whole = shape(cli.sale_seats, cli.sale_seats as usize * 10, true);
    let (backend, relays) = backends_for(&log.endpoint, &sale_run, cli.relays).await?;
    let event = sale::create_event(&backend, &whole, "capacity").await?;
    ledger.take();
    log.take();
    eprintln!(
        "capacity: run 2, {} buyers on {} seats",
        whole.buyers, whole.seats
    );
    let second = sale::run(&backend, &relays, &whole, &event, &mut rng).await?;
    let (sale_units, sale_requests) = ledger.take();
    let n = whole.buyers as f64;
    let inputs = model::Inputs {
        rate: cli.rate,
        loops: cli.loops,
        hot_keys: (1..=cli.hot_seats)
            .map(|seat| format!("capacity#A-1-{seat}"))
            .collect(),
        keys,
        key_intents: keys_sale.buyers as f64,
        sale: sale_units,
        sale_dynamodb_requests: sale_requests as f64,
        sale_counts: log.take(),
        // Held and Sold (or Cancelled), Rejected, and a place's Waitlisted and its end.
        sale_events: (second.held * 2 + second.rejected + second.waitlisted * 2 + second.lapsed)
            as f64,
        sale_intents: n,
        api_cpu: second.api_cpu / n,
        worker_cpu: second.worker_cpu / n,
    };
    let report = model::report(&inputs);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let report = serde_json::json!({
        "command": format!("bash tests/capacity/run.sh {}", args.join(" ")).trim_end(),
        "seed": seed,
        "runs": {
            "keys": {"seats": cli.seats, "buyers": cli.slice, "held": first.held, "rejected": first.rejected},
            "sale": {"seats": whole.seats, "buyers": whole.buyers, "held": second.held, "rejected": second.rejected,
                "waitlisted": second.waitlisted, "lapsed_into_line": second.lapsed},
        },
        "model": report,
    });
    let (presale_report, presale_text) = match &presale_phase {
        Some(phase) => presale_phase::report(phase, cli.codes, cli.rate),
        None => (serde_json::Value::Null, String::new()),
    };
    let mut report = report;
    if !presale_report.is_null() {
        report["presale"] = presale_report;
    }
    std::fs::write(&cli.out, serde_json::to_string_pretty(&report)? + "\n")
        .with_context(|| format!("cannot write {}", cli.out.display()))?;
    let line = if cli.waitlist {
        format!(
            " With a waitlist: run 1 waitlisted {}; run 2 waitlisted {}, {} holds lapsed into \
             the line, the rest confirmed, then the waitlist closed.",
            first.waitlisted, second.waitlisted, second.lapsed
        )
    } else if cli.presale {
        format!(
            " Run 1 starts with a presale: {} codes of 4 seats for its last {} sections, the \
             first half of its buyers claiming there under codes of their own, the second half \
             the public sale outside them.",
            cli.codes,
            presale::CHANNEL_SECTIONS
        )
    } else if cli.together {
        " Section requests ask for 1 to 4 seats together.".to_owned()
    } else {
        String::new()
    };
    let tables = format!(
        "From `bash tests/capacity/run.sh{}` on {} (seed {seed}). Run 1: {} buyers on {} seats, {} held, \
         {} rejected. Run 2: {} buyers on {} seats, {} held (all confirmed), {} rejected.{line}\n\n{presale_text}{}",
        args.iter().map(|a| format!(" {a}")).collect::<String>(),
        jiff::Zoned::now().date(),
        cli.slice,
        cli.seats,
        first.held,
        first.rejected,
        whole.buyers,
        whole.seats,
        second.held,
        second.rejected,
        model::markdown(&report["model"])
    );
    println!("{tables}");
    update_document(&cli.document, &cli.marker, &tables)
}
