//! One seeded run: the storm (faults, crashes and duplicates while the buyers shop, for the
//! step budget), then the quiescent tail (faults off; the queue drains; an operator replays the
//! dead-letter queue; every hold lapses and is swept; the relay catches up), with the
//! invariants checked after every step and the end's checks last.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use futures_util::FutureExt;
use jiff::Timestamp;
use seatclaim_core::Backend;
use seatclaim_core::app::BatchOutcome;
use seatclaim_core::domain::JobStatus;
use seatclaim_core::memory::{self, Lane, Memory, MemoryPlans, Optimistic};
use seatclaim_core::ports::{Clock, CodesCreation};

use super::actors::{self, Ctx};
use super::adversary;
use super::buyer::buyer;
use super::clock::SimClock;
use super::dice::Dice;
use super::gate::Gate;
use super::invariants::Observer;
use super::ledger::Ledger;
use super::mutants::{Mutant, mutate};
use super::options::Options;
use super::payer;
use super::plans::GatedPlans;
use super::ports::gate_ports;
use super::racer::{self, Move, Race};
use super::report::{Failure, SeedReport};
use super::scheduler::{Actor, Role, Scheduler, Start, Timers};
use super::world::Plan;

/// Steps the tail may take to drain before the run counts as stuck.
const TAIL_STEPS: usize = 20_000;

struct Run {
    options: Options,
    dice: Dice,
    clock: Arc<SimClock>,
    memory: Memory,
    gate: Arc<Gate>,
    ctx: Rc<Ctx>,
    scheduler: Scheduler,
    observer: Observer,
    steps: u64,
    crashes: BTreeMap<&'static str, u64>,
}

/// Runs `seed`; the report of what it did, or the invariant it broke.
pub fn run(seed: u64, options: Options) -> Result<SeedReport, Failure> {
    let mut run = Run::new(seed, options);
    let start = run.clock.now();
    let result = run.storm().and_then(|()| run.tail());
    match result {
        Ok(()) => Ok(run.report(start)),
        Err(violation) => Err(Failure {
            seed,
            options,
            at_step: run.steps,
            violation,
            trace: run.gate.take_trace(),
        }),
    }
}

impl Run {
    fn new(seed: u64, options: Options) -> Self {
        // The app's backoff jitter draws from this thread's generator: seeded too.
        fastrand::seed(seed);
        let dice = Dice::new(seed);
        let plan = Plan::draw(&dice);
        let start = Timestamp::from_second(super::world::START_SECOND).unwrap();
        let clock = Arc::new(SimClock::starting_at(start));
        let memory = memory::open(clock.clone(), plan.queue);
        memory
            .backend
            .catalog
            .create_event(&plan.event)
            .now_or_never()
            .expect("the memory store answers at once")
            .expect("the event is created");
        if let Some(presale) = &plan.presale {
            let code = [presale.record()];
            let created = memory
                .backend
                .catalog
                .create_codes(&plan.event.event_id, &code);
            let created = created
                .now_or_never()
                .expect("the memory store answers at once");
            assert!(
                matches!(created, Ok(CodesCreation::Created(1))),
                "{created:?}"
            );
        }
        let gate = Arc::new(Gate::new(
            dice.clone(),
            clock.clone(),
            plan.rates,
            options.verbose,
        ));
        let timers = Rc::new(Timers::default());
        gate.note(|| format!("seed {seed}: {plan:?}"));
        let ctx = Rc::new(Ctx {
            backend: gate_ports(&inventory(&memory, options, &gate), &gate),
            store: Arc::clone(&memory.store),
            clock: Arc::clone(&clock),
            timers: Rc::clone(&timers),
            dice: dice.clone(),
            gate: Arc::clone(&gate),
            plan,
            ledger: RefCell::new(Ledger::default()),
            batches: RefCell::new(BatchOutcome::default()),
        });
        let ctx_plan = ctx.plan.clone();
        let scheduler = Scheduler::new(Arc::clone(&clock), timers, Arc::clone(&gate));
        let mut run = Self {
            options,
            dice,
            clock,
            memory,
            gate,
            ctx,
            scheduler,
            observer: Observer::new(&ctx_plan, options.optimistic),
            steps: 0,
            crashes: BTreeMap::new(),
        };
        run.spawn_actors();
        run
    }

    fn spawn(&mut self, name: String, role: Role, body: impl Fn(Rc<Ctx>) -> Actor + 'static) {
        let ctx = Rc::clone(&self.ctx);
        let start: Start = Rc::new(move || body(Rc::clone(&ctx)));
        self.scheduler.spawn(name, role, start);
    }

    fn spawn_actors(&mut self) {
        let plan = self.ctx.plan.clone();
        for n in 0..plan.buyers {
            self.spawn(format!("buyer-{n}"), Role::Client, move |ctx| {
                Box::pin(buyer(ctx, n))
            });
        }
        self.spawn_adversaries();
        for n in 0..plan.workers {
            let at_once = self.dice.chance(0.3);
            self.spawn(format!("worker-{n}"), Role::Process, move |ctx| {
                Box::pin(actors::worker(ctx, at_once))
            });
        }
        self.spawn("sweeper".into(), Role::Process, |ctx| {
            Box::pin(actors::sweeper(ctx))
        });
        self.spawn("relay".into(), Role::Process, |ctx| {
            Box::pin(actors::relay(ctx))
        });
        if plan.operator {
            self.spawn("operator".into(), Role::Process, |ctx| {
                Box::pin(actors::operator(ctx))
            });
        }
        if let Some(every) = plan.duplicate_every {
            self.spawn("duplicator".into(), Role::Client, move |ctx| {
                Box::pin(actors::duplicator(ctx, every))
            });
        }
    }

    /// The seed's adversaries (`adversary.rs`, `payer.rs`, `racer.rs`): clients, like the buyers.
    fn spawn_adversaries(&mut self) {
        let counts = self.ctx.plan.adversaries;
        for n in 0..counts.confirmers {
            self.spawn(format!("confirmer-{n}"), Role::Client, move |ctx| {
                Box::pin(adversary::confirmer(ctx, n))
            });
        }
        for n in 0..counts.unservable {
            self.spawn(format!("greedy-{n}"), Role::Client, move |ctx| {
                Box::pin(adversary::unservable(ctx, n))
            });
        }
        for n in 0..counts.payers {
            self.spawn(format!("payer-{n}"), Role::Client, move |ctx| {
                Box::pin(payer::payer(ctx, n))
            });
        }
        for n in 0..counts.racers {
            let race = Rc::new(RefCell::new(Race::default()));
            let lead = Rc::clone(&race);
            self.spawn(format!("racer-{n}"), Role::Client, move |ctx| {
                Box::pin(racer::lead(ctx, n, Rc::clone(&lead)))
            });
            for what in [Move::Cancel, Move::Extend, Move::Pay] {
                let race = Rc::clone(&race);
                self.spawn(format!("racer-{n}-{what:?}"), Role::Client, move |ctx| {
                    Box::pin(racer::racer(ctx, n, what, Rc::clone(&race)))
                });
            }
        }
    }

    /// One step: maybe time passes or a process crashes, then one actor runs; then every
    /// invariant is checked. `false` once no actor is left.
    fn step(&mut self, stormy: bool) -> Result<bool, String> {
        if stormy {
            self.weather();
        }
        let more = self.scheduler.step(&self.dice);
        self.steps += 1;
        let ledger = self.ctx.ledger.borrow();
        self.observer
            .check(&self.memory, self.clock.now(), &ledger)?;
        drop(ledger);
        if let Some(broken) = self.ctx.ledger.borrow().violations.first() {
            return Err(format!("a buyer was told something wrong: {broken}"));
        }
        Ok(more)
    }

    /// Time jumps and crashes, drawn per step.
    fn weather(&mut self) {
        if self.dice.chance(0.2) {
            self.clock.advance(self.dice.millis(0..1_500));
        }
        if self.dice.chance(0.005) {
            let by = self.dice.millis(10_000..120_000);
            self.gate.note(|| format!("time jumps {by:?}"));
            self.clock.advance(by);
        }
        if self.dice.chance(self.ctx.plan.crash_rate) {
            let restart = self.dice.millis(500..30_000);
            if let Some((name, at)) = self.scheduler.crash_one(&self.dice, restart) {
                self.gate
                    .note(|| format!("CRASH {name} before {at}; restarts in {restart:?}"));
                *self.crashes.entry(at).or_default() += 1;
            }
        }
    }

    fn storm(&mut self) -> Result<(), String> {
        for _ in 0..self.options.steps {
            if !self.step(true)? {
                break;
            }
        }
        Ok(())
    }

    fn tail(&mut self) -> Result<(), String> {
        self.gate.faults_off();
        self.gate.note(|| "the storm is over: faults off".into());
        self.scheduler.stop("operator");
        self.scheduler.stop("duplicator");
        self.drain("the buyers finish and the queue drains", |run| {
            !run.scheduler.clients_running() && run.queue_empty()
        })?;
        self.spawn("final-replay".into(), Role::Client, |ctx| {
            Box::pin(actors::final_replay(ctx))
        });
        self.drain("the dead letters are replayed and decided", |run| {
            !run.scheduler.clients_running() && run.queue_empty()
        })?;
        self.spawn("close-waitlist".into(), Role::Client, |ctx| {
            Box::pin(actors::close_waitlist(ctx))
        });
        self.drain("the operator closes the waitlist", |run| {
            !run.scheduler.clients_running()
        })?;
        self.clock.advance(self.ctx.plan.hold());
        self.drain(
            "every hold lapses, is swept and its events published",
            |run| {
                run.memory.store.inspect(|state| {
                    state.jobs().all(|j| j.status != JobStatus::Held)
                        && state.outbox().iter().all(|e| e.published_at.is_some())
                })
            },
        )?;
        self.observer.check_end(&self.memory)
    }

    /// Steps until `done`, failing if that takes more than [`TAIL_STEPS`].
    fn drain(&mut self, what: &str, done: impl Fn(&Self) -> bool) -> Result<(), String> {
        for _ in 0..TAIL_STEPS {
            if done(self) {
                return Ok(());
            }
            if !self.step(false)? {
                break;
            }
        }
        if done(self) {
            return Ok(());
        }
        Err(format!(
            "stuck: {what} did not happen within {TAIL_STEPS} steps"
        ))
    }

    fn queue_empty(&self) -> bool {
        self.memory
            .store
            .inspect(|state| state.queue().messages().all(|(_, m)| m.lane == Lane::Dead))
    }

    fn report(&self, start: Timestamp) -> SeedReport {
        let mut jobs = BTreeMap::new();
        self.memory.store.inspect(|state| {
            for job in state.jobs() {
                *jobs.entry(job.status.as_str()).or_default() += 1;
            }
        });
        let ledger = self.ctx.ledger.borrow();
        SeedReport {
            steps: self.steps,
            simulated_secs: self.clock.now().duration_since(start).as_secs_f64(),
            jobs,
            faults: self.gate.counts(),
            crashes: self.crashes.clone(),
            batches: *self.ctx.batches.borrow(),
            duplicates: ledger.duplicates,
            replays: ledger.replays,
            retries: ledger.retries,
            adversaries: ledger.adversaries,
            trace: self.gate.take_trace(),
        }
    }
}

/// The memory backend's ports as the run decides: broken by its mutant, if any, and through the
/// optimistic step's gated commit when it runs the AWS-shaped path (the piecemeal mutant's too).
fn inventory(memory: &Memory, options: Options, gate: &Arc<Gate>) -> Backend {
    let mut backend = mutate(memory, options.mutant);
    let piecemeal = options.mutant == Some(Mutant::PiecemealCommit);
    if options.optimistic || piecemeal {
        let plans = MemoryPlans::new(Arc::clone(&memory.store));
        let gated = GatedPlans::new(plans, Arc::clone(gate), piecemeal);
        backend.inventory = Arc::new(Optimistic::new(gated, Arc::clone(&memory.store)));
    }
    backend
}
