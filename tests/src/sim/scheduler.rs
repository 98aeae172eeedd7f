//! The simulation's executor: every actor (buyer, worker, sweeper, relay, operator) is a future,
//! and one step polls one of them, chosen by the seed, until it parks again. Actors park only at
//! a port call ([`Gate`](super::gate::Gate) yields before each) or in a [`Sleep`] on simulated
//! time, so a step is at most one port call, and nothing runs unless the scheduler polls it: no
//! threads, no runtime, no wall clock. A crash drops an actor's future where it is parked, which
//! abandons whatever it was doing between two port calls, and starts a fresh one later.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use jiff::Timestamp;
use seatclaim_core::ports::Clock;

use super::clock::{SimClock, signed};
use super::dice::Dice;
use super::gate::Gate;

/// An actor's body.
pub type Actor = Pin<Box<dyn Future<Output = ()>>>;
/// Makes an actor's body afresh: how a crashed process restarts.
pub type Start = Rc<dyn Fn() -> Actor>;

/// What the actor being polled asked to wait for: set by [`Sleep`], read by the scheduler.
#[derive(Debug, Default)]
pub struct Timers {
    wake_at: Cell<Option<Timestamp>>,
}

/// Parks the polled actor until simulated time reaches `until`.
pub struct Sleep {
    clock: SimClockRef,
    timers: Rc<Timers>,
    until: Timestamp,
}

/// The clock as the actors hold it.
pub type SimClockRef = std::sync::Arc<SimClock>;

impl Sleep {
    /// A sleep of `by` from now.
    pub fn new(clock: &SimClockRef, timers: &Rc<Timers>, by: Duration) -> Self {
        let until = clock
            .now()
            .saturating_add(signed(by))
            .unwrap_or(Timestamp::MAX);
        Self {
            clock: SimClockRef::clone(clock),
            timers: Rc::clone(timers),
            until,
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.clock.now() >= self.until {
            Poll::Ready(())
        } else {
            self.timers.wake_at.set(Some(self.until));
            Poll::Pending
        }
    }
}

/// Which kind of actor it is: clients (buyers, the queue's own misbehaviour, the operator's
/// last replay) run a script to its end and never crash, a lost answer being a failed call;
/// processes loop for ever and can die at any step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Runs a script to its end.
    Client,
    /// A worker claim loop, the sweeper, the relay or an operator: a process that may crash.
    Process,
}

struct Task {
    name: String,
    role: Role,
    future: Option<Actor>,
    wake_at: Timestamp,
    start: Start,
}

/// The actors and the order they run in.
pub struct Scheduler {
    tasks: Vec<Task>,
    clock: SimClockRef,
    timers: Rc<Timers>,
    gate: std::sync::Arc<Gate>,
}

impl Scheduler {
    /// An empty scheduler on `clock`, telling `gate` whose turn it is.
    pub fn new(clock: SimClockRef, timers: Rc<Timers>, gate: std::sync::Arc<Gate>) -> Self {
        Self {
            tasks: Vec::new(),
            clock,
            timers,
            gate,
        }
    }

    /// Adds an actor, runnable at once.
    pub fn spawn(&mut self, name: String, role: Role, start: Start) {
        self.gate.name_actor(self.tasks.len(), &name);
        self.tasks.push(Task {
            name,
            role,
            future: Some(start()),
            wake_at: self.clock.now(),
            start,
        });
    }

    /// Stops every actor whose name starts with `prefix`, for good.
    pub fn stop(&mut self, prefix: &str) {
        for task in self.tasks.iter_mut().filter(|t| t.name.starts_with(prefix)) {
            task.future = None;
        }
    }

    /// Whether any client is still running its script.
    #[must_use]
    pub fn clients_running(&self) -> bool {
        self.tasks
            .iter()
            .any(|t| t.role == Role::Client && t.future.is_some())
    }

    /// Crashes one running process chosen by `dice`, most often one parked before a port call
    /// (rather than asleep): its future is dropped where it is parked and a fresh one starts
    /// after `restart`. Returns its name and the call it was about to make.
    pub fn crash_one(&mut self, dice: &Dice, restart: Duration) -> Option<(String, &'static str)> {
        let now = self.clock.now();
        let running = |at_a_call: bool| -> Vec<usize> {
            (0..self.tasks.len())
                .filter(|i| {
                    let task = &self.tasks[*i];
                    task.role == Role::Process
                        && task.future.is_some()
                        && (!at_a_call || task.wake_at <= now)
                })
                .collect()
        };
        let mut victims = running(dice.chance(0.8));
        if victims.is_empty() {
            victims = running(false);
        }
        let victim = *dice.pick(&victims)?;
        let at = self.gate.parked_at(victim);
        self.gate.restarted(victim);
        let task = &mut self.tasks[victim];
        task.future = Some((task.start)());
        task.wake_at = now
            .saturating_add(signed(restart))
            .unwrap_or(Timestamp::MAX);
        Some((task.name.clone(), at))
    }

    /// Runs one step: polls one runnable actor chosen by `dice`, or, if none is runnable, moves
    /// the clock to the earliest wake-up. Returns `false` once no actor is left.
    pub fn step(&mut self, dice: &Dice) -> bool {
        let now = self.clock.now();
        let runnable: Vec<usize> = (0..self.tasks.len())
            .filter(|i| self.tasks[*i].future.is_some() && self.tasks[*i].wake_at <= now)
            .collect();
        let Some(&chosen) = dice.pick(&runnable) else {
            let next = self
                .tasks
                .iter()
                .filter(|t| t.future.is_some())
                .map(|t| t.wake_at)
                .min();
            return next.is_some_and(|at| {
                self.clock.advance_to(at);
                true
            });
        };
        self.poll(chosen, now);
        true
    }

    fn poll(&mut self, index: usize, now: Timestamp) {
        self.gate.enter(index);
        self.timers.wake_at.set(None);
        let task = &mut self.tasks[index];
        let Some(future) = task.future.as_mut() else {
            return;
        };
        let mut context = Context::from_waker(Waker::noop());
        match future.as_mut().poll(&mut context) {
            Poll::Ready(()) => task.future = None,
            Poll::Pending => task.wake_at = self.timers.wake_at.take().unwrap_or(now),
        }
    }
}
