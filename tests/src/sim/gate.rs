//! The gate every port call of the simulation passes: it parks the calling actor first (the
//! step boundary where the scheduler may run another actor, move the clock or crash the caller),
//! then, while faults are on, may fail the call before it reaches the backend or after it
//! committed (a timeout the caller cannot tell from a failure), and writes the trace a failing
//! seed prints. The wrappers that route each port through here are in `ports.rs`.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use jiff::Timestamp;
use seatclaim_core::ports::{BackendError, Clock};

use super::clock::SimClock;
use super::dice::Dice;

/// Which part of the system a call goes to: each fails at its own rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// A write to the store (admission, claim, settle, close, reopen, outbox marks).
    Store,
    /// A read of the store: it can only fail before, having nothing to commit.
    Read,
    /// A queue call.
    Queue,
    /// The event bus.
    Bus,
}

/// How often each part fails while faults are on.
#[derive(Debug, Clone, Copy, Default)]
pub struct FaultRates {
    /// Store calls that fail, half before and half after the write.
    pub store: f64,
    /// Queue calls that fail, half before and half after.
    pub queue: f64,
    /// Publications that fail (whole or in part).
    pub bus: f64,
}

/// What the gate does to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Nothing: the call goes through.
    None,
    /// It fails without reaching the backend.
    Before,
    /// It reaches the backend and commits, and then fails.
    After,
}

/// How many faults were injected, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// Port calls made.
    pub calls: u64,
    /// Calls failed before the backend saw them.
    pub before: u64,
    /// Calls failed after they committed.
    pub after: u64,
}

struct Inner {
    rates: FaultRates,
    on: bool,
    current: usize,
    names: Vec<String>,
    parked: Vec<&'static str>,
    trace: Option<Vec<String>>,
    counts: FaultCounts,
}

/// The step boundary, the faults and the trace.
pub struct Gate {
    dice: Dice,
    clock: Arc<SimClock>,
    start: Timestamp,
    inner: Mutex<Inner>,
}

impl Gate {
    /// A gate failing calls at `rates` (once [`Gate::faults_on`]), tracing when `verbose`.
    pub fn new(dice: Dice, clock: Arc<SimClock>, rates: FaultRates, verbose: bool) -> Self {
        let start = clock.now();
        Self {
            dice,
            clock,
            start,
            inner: Mutex::new(Inner {
                rates,
                on: true,
                current: 0,
                names: Vec::new(),
                parked: Vec::new(),
                trace: verbose.then(Vec::new),
                counts: FaultCounts::default(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops injecting faults: the quiescent tail of a run.
    pub fn faults_off(&self) {
        self.lock().on = false;
    }

    /// How many faults were injected.
    pub fn counts(&self) -> FaultCounts {
        self.lock().counts
    }

    /// Names actor `index`, for the trace.
    pub fn name_actor(&self, index: usize, name: &str) {
        let mut inner = self.lock();
        if inner.names.len() <= index {
            inner.names.resize(index + 1, String::new());
            inner.parked.resize(index + 1, "start");
        }
        inner.names[index] = name.to_owned();
    }

    /// Marks actor `index` as the one being polled.
    pub fn enter(&self, index: usize) {
        self.lock().current = index;
    }

    /// The call actor `index` is parked before (where a crash would stop it).
    pub fn parked_at(&self, index: usize) -> &'static str {
        self.lock().parked.get(index).copied().unwrap_or("start")
    }

    /// Adds a line of the polled actor's to the trace, if there is one: `line` is only made
    /// when it is kept.
    pub fn log(&self, line: impl FnOnce() -> String) {
        self.write(false, line);
    }

    /// Adds a line of the simulator's own (time jumps, crashes) to the trace.
    pub fn note(&self, line: impl FnOnce() -> String) {
        self.write(true, line);
    }

    fn write(&self, own: bool, line: impl FnOnce() -> String) {
        let mut inner = self.lock();
        if inner.trace.is_none() {
            return;
        }
        let at = self.clock.now().duration_since(self.start).as_secs_f64();
        let actor = if own {
            "[sim]".to_owned()
        } else {
            inner.names.get(inner.current).cloned().unwrap_or_default()
        };
        let line = format!("{at:>10.3}s  {actor:<12} {}", line());
        if let Some(trace) = inner.trace.as_mut() {
            trace.push(line);
        }
    }

    /// The trace so far (empty unless verbose).
    pub fn take_trace(&self) -> Vec<String> {
        self.lock().trace.take().unwrap_or_default()
    }

    /// Draws whether `part` fails now, and how.
    pub fn roll(&self, part: Part) -> Fault {
        let (on, rates) = {
            let mut inner = self.lock();
            inner.counts.calls += 1;
            (inner.on, inner.rates)
        };
        let rate = match part {
            Part::Store => rates.store,
            Part::Read => rates.store / 2.0,
            Part::Queue => rates.queue,
            Part::Bus => rates.bus,
        };
        if !on || !self.dice.chance(rate) {
            return Fault::None;
        }
        let fault = if part == Part::Read || self.dice.chance(0.5) {
            Fault::Before
        } else {
            Fault::After
        };
        let mut inner = self.lock();
        match fault {
            Fault::Before => inner.counts.before += 1,
            _ => inner.counts.after += 1,
        }
        fault
    }

    /// One port call: parks the caller, then runs `work` under the fault drawn for `part`.
    pub async fn call<T: Debug>(
        &self,
        name: &'static str,
        part: Part,
        work: impl Future<Output = Result<T, BackendError>>,
    ) -> Result<T, BackendError> {
        self.park(name).await;
        let fault = self.roll(part);
        if fault == Fault::Before {
            self.log(|| format!("{name:<30} FAILED before the call"));
            return Err(BackendError::transient(format!("simulated: {name} failed")));
        }
        let result = work.await;
        self.set_parked("asleep");
        self.log(|| format!("{name:<30} {}", describe(&result, fault)));
        match (fault, result) {
            (Fault::After, Ok(_)) => Err(BackendError::transient(format!(
                "simulated: {name} timed out after it committed"
            ))),
            (_, result) => result,
        }
    }

    /// Parks the polled actor before `name`: returns once the scheduler polls it again.
    pub async fn park(&self, name: &'static str) {
        self.set_parked(name);
        YieldOnce(false).await;
    }

    /// Records where the polled actor waits: before a call, or (after one) in a sleep.
    fn set_parked(&self, name: &'static str) {
        let mut inner = self.lock();
        let current = inner.current;
        if let Some(parked) = inner.parked.get_mut(current) {
            *parked = name;
        }
    }

    /// Actor `index` starts afresh.
    pub fn restarted(&self, index: usize) {
        if let Some(parked) = self.lock().parked.get_mut(index) {
            *parked = "start";
        }
    }

    /// Draws from the run's dice, for the wrappers' reordering.
    pub fn dice(&self) -> &Dice {
        &self.dice
    }
}

fn describe<T: Debug>(result: &Result<T, BackendError>, fault: Fault) -> String {
    let mut text = match result {
        Ok(value) => format!("ok {value:?}"),
        Err(error) => format!("error {error}"),
    };
    if text.len() > 400 {
        let mut cut = 400;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(" ...");
    }
    if fault == Fault::After {
        text.push_str("  -> then FAILED after it committed");
    }
    text
}

/// Pending once, then ready: hands the turn back to the scheduler.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}
