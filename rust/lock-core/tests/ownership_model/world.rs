//! The simulated cluster of the ownership model: a master (node 0, which holds no copy, as the
//! plugin keeps lock copies off the master) and three data nodes, one partition. Each node runs
//! the core's own `Ownership` and lock tables (`LockTable`, `Standby`); the world carries
//! their messages, keeps their timers and plays Elasticsearch's part (`elastic.rs`: the cluster
//! state, the primary-term check on replicas, promotion, relocation, recovery); `node.rs` is a
//! data node, owner and copy, as the plugin's cluster code drives the core.
//!
//! Real time runs in steps of [`STEP_MS`]. Each node has its own monotonic clock, at a rate drawn
//! within the allowed error of real time. A paused node (SIGSTOP) handles nothing, its timers do
//! not fire and messages to it wait, while its clock runs on. A cut drops messages one way or both
//! ways; a run may also lose any message on its own, unseen by its sender (a stronger adversary
//! than TCP, whose broken connections fail their requests); every message takes a random delay,
//! so messages also overtake each other. A crashed node
//! loses everything but its persisted state (its standby and term) and comes back later.

use lock_core::ownership::{Flaw, LeaseSource, MasterAnswer, Micros};
use lock_core::{
    AcquireOutcome, AcquireRequest, Config, FencingToken, FullState, KeyInfoRequest, LockTable,
    PartitionDelta, PartitionSnapshot, ReleaseRequest, Standby,
};

use super::checker::{Checker, Told};
use super::elastic::State;
use super::node::Node;

pub const NODES: usize = 4;
pub const MASTER: usize = 0;
/// The node that owns the partition in epoch 1, its in-sync replica, and a spare.
pub const OWNER: usize = 1;
pub const REPLICA: usize = 2;
pub const SPARE: usize = 3;

pub const STEP_MS: u64 = 5;
pub(super) const P: u32 = 0;
pub(super) const KEYS: [&str; 3] = ["k0", "k1", "k2"];
pub(super) const CLIENTS: [&str; 3] = ["c0", "c1", "c2"];
/// Longer than any run: nothing expires, so every grant told stays held until told released.
pub(super) const LEASE_MS: u64 = 600_000;
/// The plugin's hand-over retries (`PartitionHandover`): the target gives up after about 3 s.
pub(super) const HANDOFF_RETRY_MS: u64 = 300;
pub(super) const HANDOFF_ATTEMPTS: u32 = 10;
/// After a failed batch, the owner looks again whether it is still the primary (PartitionManager).
pub(super) const RECHECK_AFTER_FAILED_BATCH_MS: u64 = 1_000;
/// How soon the master allocates a missing replica, and republishes its state to laggards.
pub(super) const RECOVERY_AFTER_MS: u64 = 1_000;
pub(super) const REPUBLISH_MS: u64 = 1_000;

/// How a crash is seen. `Seen`: its connections close and the master removes its copies at once,
/// as Elasticsearch does. `Unseen` (a copy's crash only; a primary's is always seen): a stronger
/// adversary than Elasticsearch, which makes a restarted copy recover before it is promoted: the
/// copy keeps its place in the in-sync set, so a copy that remembers no answer can be promoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crash {
    Seen,
    Unseen,
}

/// A cut of the messages from `from` to `to` (and back with `both`), from `at` for `len` ms.
#[derive(Clone, Copy, Debug)]
pub struct Cut {
    pub from: usize,
    pub to: usize,
    pub at: u64,
    pub len: u64,
    pub both: bool,
}

/// What happens in one run, drawn by proptest or written by hand.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// Each node's clock rate, within `1 ± e`.
    pub rates: [f64; NODES],
    /// Per node: paused from `.1` for `.2` ms.
    pub pauses: Vec<(usize, u64, u64)>,
    pub cuts: Vec<Cut>,
    /// Per node: crashes at `.1`, back `.2` ms later.
    pub crashes: Vec<(usize, u64, u64, Crash)>,
    /// The master moves the primary to a node without a copy (a relocation) at these times.
    pub moves: Vec<u64>,
    /// Largest one-way delay of a message, and of a publication, ms.
    pub max_delay: u64,
    pub max_publish_delay: u64,
    /// What renews owners' leases (the master's confirmations in a mixed cluster).
    pub source: LeaseSource,
    /// `locks.failover.silent_owner`, ms.
    pub silent_bound_ms: u64,
    pub run_ms: u64,
    /// Seeds the delays and the clients' requests.
    pub seed: u64,
    pub flaw: Flaw,
    /// Every hand-over request sent before this time arrives at it, whatever the cuts meanwhile:
    /// as a request on a connection that broke during a cut, which TCP delivered once the
    /// connection worked again, long after its asker gave up (docs/RELIABILITY.md "Figures").
    pub late_hand_overs: Option<u64>,
    /// Each message is lost with this chance, in thousandths, whatever its kind.
    pub drops_per_mille: u64,
}

#[derive(Clone, Debug)]
pub(super) enum Body {
    Heartbeat,
    Full(Box<FullState>),
    Delta(Box<PartitionDelta>),
}

#[derive(Clone, Debug)]
pub(super) enum Msg {
    Batch {
        epoch: u64,
        sent: Micros,
        body: Body,
    },
    BatchAnswer {
        epoch: u64,
        sent: Micros,
        answer: Took,
    },
    /// A node's question to the master: about its partition in `epoch`, or (None) about
    /// nothing, from a node that serves none.
    Check {
        epoch: Option<u64>,
        asked: Micros,
    },
    CheckAnswer {
        epoch: u64,
        asked: Micros,
        yours: bool,
    },
    Publish(Box<State>),
    FailCopy {
        epoch: u64,
        copy: usize,
    },
    CopySynced {
        epoch: u64,
        copy: usize,
        allocation: u64,
    },
    HandOver {
        epoch: u64,
    },
    HandOverAnswer {
        epoch: u64,
        snapshot: Option<Box<PartitionSnapshot>>,
    },
    FailShard {
        epoch: u64,
    },
    /// The master asks a relocating primary to hand its primary context off to the target.
    HandOffAsk {
        epoch: u64,
    },
    /// The source handed off: Elasticsearch refuses its batches from now on.
    HandedOff {
        epoch: u64,
    },
}

/// A copy's answer to a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Took {
    /// Applied (or, a heartbeat, acknowledged): it renews the owner.
    Yes,
    /// The copy runs in a newer term (Elasticsearch's primary-term check): the sender is deposed.
    NewerTerm,
    /// No copy here that can take it (not allocated here yet, a primary, a gap): the owner has
    /// the master fail the copy, as for any replica write that failed.
    NoCopy,
}

pub(super) struct Envelope {
    pub(super) at: u64,
    pub(super) from: usize,
    pub(super) to: usize,
    pub(super) msg: Msg,
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The first broken rule, with its real time.
    pub violation: Option<(u64, String)>,
    pub failovers: u64,
    pub handovers: u64,
    /// Hand-over requests refused as older than the epoch served at the node asked.
    pub refused_hand_overs: u64,
    /// The node that serves when the run ends, if one does.
    pub served_at_end: Option<usize>,
    pub grants: u64,
    pub reads: u64,
}

/// splitmix64: delays and requests, reproducible from the schedule's seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..=n`.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % (n + 1)
        }
    }
}

pub struct World {
    pub(super) s: Schedule,
    pub(super) rng: Rng,
    pub(super) t: u64,
    pub(super) nodes: Vec<Node>,
    pub(super) net: Vec<Envelope>,
    pub(super) state: State,
    pub(super) missing_replica_since: Option<u64>,
    pub(super) last_publish: u64,
    pub(super) checker: Checker,
    pub(super) out: Outcome,
    /// With `OWNERSHIP_MODEL_TRACE` set: what happened, printed with a broken rule.
    pub(super) trace: Option<Vec<String>>,
}

/// A message as the trace shows it.
fn short(msg: &Msg) -> String {
    match msg {
        Msg::Batch { epoch, body: Body::Full(f), .. } => format!(
            "full batch e{epoch} {:?}",
            f.snapshot.locks.iter().map(|l| (&l.key, l.fencing_token.0 & 0xff)).collect::<Vec<_>>()
        ),
        Msg::Batch { epoch, body: Body::Delta(d), .. } => format!(
            "delta e{epoch} seq {} locks {:?} removed {}",
            d.seq,
            d.locks.iter().map(|l| (&l.key, l.fencing_token.0 & 0xff)).collect::<Vec<_>>(),
            d.released.len()
        ),
        Msg::HandOverAnswer { epoch, snapshot } => {
            format!("hand-over answer e{epoch} state {}", snapshot.is_some())
        }
        other => format!("{other:?}").chars().take(200).collect(),
    }
}

pub(super) fn config() -> Config {
    Config { max_lease_ms: LEASE_MS, default_lease_ms: LEASE_MS, ..Config::default() }
}

impl World {
    /// Node 1 serves the partition in epoch 1 with node 2 as its in-sync replica, which holds
    /// its whole state; both were confirmed when it opened.
    pub fn new(s: Schedule) -> World {
        let mut nodes: Vec<Node> = (0..NODES).map(|_| Node::new(s.flaw, s.source)).collect();
        let state = State {
            version: 1,
            primary: Some(OWNER),
            epoch: 1,
            in_sync: vec![REPLICA],
            recovering: vec![],
            relocating: None,
            orphan: None,
            allocations: [(REPLICA, 0)].into(),
            next_allocation: 0,
            down: vec![],
        };
        let mut table = LockTable::with_config(1, config()).expect("table");
        table.set_change_tracking(true);
        let full = table.export_full();
        nodes[REPLICA].standby = Some(Standby::from_full(&full, 0));
        nodes[REPLICA].own.answered(P, 0);
        nodes[OWNER].log = Some(Standby::from_full(&full, 0));
        nodes[OWNER].table = Some(table);
        nodes[OWNER].own.opened(P, 1, true, 0);
        nodes[OWNER].own.renewed(P, 1, 0, 0);
        nodes[OWNER].commit.synced = vec![(REPLICA, 0)];
        for node in &mut nodes {
            node.applied = Some(state.clone());
        }
        World {
            rng: Rng(s.seed),
            s,
            t: 0,
            nodes,
            net: Vec::new(),
            state,
            missing_replica_since: None,
            last_publish: 0,
            checker: Checker::default(),
            out: Outcome::default(),
            trace: std::env::var_os("OWNERSHIP_MODEL_TRACE").map(|_| Vec::new()),
        }
    }

    /// Runs the schedule to its end or its first broken rule.
    pub fn run(mut self) -> Outcome {
        // Requests, then what arrived, then the timers: each may change who serves, so the rules
        // are checked after each (a resumed node may answer a request before it handles what
        // arrived while it was paused, or its next heartbeat tells it anything).
        'run: while self.t <= self.s.run_ms {
            self.scheduled();
            for phase in 0..3 {
                match phase {
                    0 => self.client(),
                    1 => self.deliver(),
                    _ => {
                        for n in 0..NODES {
                            if self.runs(n) {
                                self.timers(n);
                            }
                        }
                    }
                }
                if let Err(e) = self.check() {
                    if let Some(trace) = &self.trace {
                        eprintln!("{}", trace.join("\n"));
                    }
                    self.out.violation = Some((self.t, e));
                    break 'run;
                }
            }
            self.t += STEP_MS;
        }
        self.out.grants = self.checker.grants;
        self.out.reads = self.checker.reads;
        self.out.served_at_end = self.serving().first().copied();
        self.out
    }

    pub(super) fn now(&self, n: usize) -> Micros {
        (self.t as f64 * self.s.rates[n] * 1_000.0) as Micros
    }

    pub(super) fn now_ms(&self, n: usize) -> u64 {
        self.now(n) / 1_000
    }

    pub(super) fn paused(&self, n: usize) -> bool {
        self.s.pauses.iter().any(|&(node, at, len)| node == n && self.t >= at && self.t < at + len)
    }

    pub(super) fn runs(&self, n: usize) -> bool {
        self.nodes[n].up && !self.paused(n)
    }

    pub(super) fn cut(&self, from: usize, to: usize) -> bool {
        self.s.cuts.iter().any(|c| {
            ((c.from == from && c.to == to) || (c.both && c.from == to && c.to == from))
                && self.t >= c.at
                && self.t < c.at + c.len
        })
    }

    /// Notes `what` in the trace, if one is kept.
    pub(super) fn note(&mut self, what: impl FnOnce() -> String) {
        let t = self.t;
        if let Some(trace) = self.trace.as_mut() {
            trace.push(format!("{t:>6} {}", what()));
        }
    }

    pub(super) fn send(&mut self, from: usize, to: usize, msg: Msg) {
        if !matches!(
            msg,
            Msg::Batch { body: Body::Heartbeat, .. }
                | Msg::BatchAnswer { .. }
                | Msg::Check { .. }
                | Msg::CheckAnswer { .. }
        ) {
            self.note(|| format!("{from} -> {to}: {}", short(&msg)));
        }
        if let (Msg::HandOver { .. }, Some(until)) = (&msg, self.s.late_hand_overs) {
            if self.t < until {
                self.net.push(Envelope { at: until, from, to, msg });
                return;
            }
        }
        if self.cut(from, to) || self.lost() {
            return;
        }
        let delay = match msg {
            Msg::Publish(_) => self.rng.below(self.s.max_publish_delay),
            _ => self.rng.below(self.s.max_delay),
        };
        self.net.push(Envelope { at: self.t + delay, from, to, msg });
    }

    /// Whether the message being sent is lost on its own (`Schedule::drops_per_mille`); the
    /// seeded draw only where a run loses messages, so that other runs keep their delays.
    fn lost(&mut self) -> bool {
        self.s.drops_per_mille > 0 && self.rng.below(1_000) < self.s.drops_per_mille
    }

    pub(super) fn deliver(&mut self) {
        let net = std::mem::take(&mut self.net);
        let (due, later): (Vec<Envelope>, Vec<Envelope>) = net
            .into_iter()
            .partition(|e| e.at <= self.t && (!self.nodes[e.to].up || !self.paused(e.to)));
        self.net = later;
        for e in due {
            if self.nodes[e.to].up && !self.cut(e.from, e.to) {
                self.handle(e.from, e.to, e.msg);
            }
        }
    }

    /// Crashes, restarts and moves due now.
    pub(super) fn scheduled(&mut self) {
        for (n, at, down, crash) in self.s.crashes.clone() {
            if self.t == at && self.nodes[n].up {
                self.crash(n, crash);
            } else if self.t == at + down && !self.nodes[n].up {
                self.restart(n);
            }
        }
        if self.s.moves.contains(&self.t) {
            self.relocate();
        }
    }

    pub(super) fn handle(&mut self, from: usize, n: usize, msg: Msg) {
        match msg {
            Msg::Batch { epoch, sent, body } => self.on_batch(from, n, epoch, sent, body),
            Msg::BatchAnswer { epoch, sent, answer } => {
                self.on_batch_answer(from, n, epoch, sent, answer)
            }
            Msg::Check { epoch, asked } => {
                let now = self.now(n);
                self.nodes[n].own.node_asked(&from.to_string(), now);
                let Some(epoch) = epoch else {
                    return; // a node serving nothing: heard, nothing to answer
                };
                let owns = self.state.primary == Some(from) && self.state.epoch == epoch;
                let yours = owns && self.nodes[n].own.heard(P, epoch, &from.to_string(), now);
                self.send(n, from, Msg::CheckAnswer { epoch, asked, yours });
            }
            Msg::CheckAnswer { epoch, asked, yours } => {
                if self.nodes[n].own.master_answered(P, epoch, asked, yours) == MasterAnswer::GiveUp
                {
                    self.lose(n);
                }
            }
            Msg::Publish(state) => self.apply_state(n, *state),
            Msg::FailCopy { epoch, copy } | Msg::CopySynced { epoch, copy, .. }
                if self.state.epoch != epoch || self.state.primary != Some(from) =>
            {
                let _ = copy; // from an owner that is no longer the primary: dropped
            }
            Msg::FailCopy { copy, .. } => {
                if self.state.copies().contains(&copy) {
                    self.state.forget_copy(copy);
                    self.publish();
                }
            }
            Msg::CopySynced { copy, allocation, .. }
                if self.state.allocation(copy) != allocation => {}
            Msg::CopySynced { copy, epoch, .. } if self.state.relocating == Some(copy) => {
                self.send(MASTER, from, Msg::HandOffAsk { epoch }); // the source takes part
            }
            Msg::CopySynced { copy, .. } => {
                if self.state.recovering.contains(&copy) {
                    self.state.recovering.retain(|&c| c != copy);
                    self.state.in_sync.push(copy);
                    self.publish();
                }
            }
            Msg::FailShard { epoch } => {
                if self.state.primary == Some(from) && self.state.epoch == epoch {
                    self.fail_primary();
                    self.publish();
                }
            }
            Msg::HandOffAsk { epoch } => {
                if self.nodes[n].own.epoch(P) == Some(epoch) {
                    self.nodes[n].relocated = true; // in primary mode no more: its batches fail
                    self.send(n, MASTER, Msg::HandedOff { epoch });
                }
            }
            Msg::HandedOff { epoch } => {
                let current = self.state.primary == Some(from) && self.state.epoch == epoch;
                if let (true, Some(target)) = (current, self.state.relocating) {
                    self.hand_off(target);
                }
            }
            Msg::HandOver { epoch } => self.on_hand_over(from, n, epoch),
            Msg::HandOverAnswer { epoch, snapshot } => self.on_hand_over_answer(n, epoch, snapshot),
        }
    }

    /// A client asks a random data node to acquire, release or read a key.
    pub(super) fn client(&mut self) {
        if self.rng.below(2) != 0 {
            return;
        }
        let n = 1 + self.rng.below(NODES as u64 - 2) as usize;
        let key = KEYS[self.rng.below(KEYS.len() as u64 - 1) as usize];
        let owner = CLIENTS[self.rng.below(CLIENTS.len() as u64 - 1) as usize];
        let op = self.rng.below(2);
        if !self.runs(n) || !self.nodes[n].own.verdict(P, self.now(n)).serves() {
            return;
        }
        let (now_ms, t) = (self.now_ms(n), self.t);
        let node = &mut self.nodes[n];
        let Some(table) = node.table.as_mut() else { return };
        let told = match op {
            0 => {
                // One acquisition per client: asked again while held, the same grant (re-entrant).
                let req = AcquireRequest {
                    wait_ms: Some(0),
                    lease_ms: Some(LEASE_MS),
                    acquisition: Some(owner.into()),
                    ..AcquireRequest::new(key, owner)
                };
                match table.acquire(&req, now_ms) {
                    Ok(AcquireOutcome::Granted(g)) => Told::Granted {
                        key: key.into(),
                        owner: owner.into(),
                        token: g.fencing_token,
                    },
                    _ => return,
                }
            }
            1 => {
                let req = ReleaseRequest {
                    key: key.into(),
                    owner: owner.into(),
                    ..ReleaseRequest::default()
                };
                match table.release(&req, now_ms) {
                    Ok(released) => {
                        self.checker.release_applied(key, released.fencing_token, t);
                        Told::Released { key: key.into(), token: released.fencing_token }
                    }
                    Err(_) => return,
                }
            }
            _ => {
                let seen = table
                    .key_info(&KeyInfoRequest::new(key), now_ms)
                    .ok()
                    .and_then(|i| i.holders.first().map(|h| h.fencing_token));
                Told::Read { key: key.into(), seen, invoked: t }
            }
        };
        node.commit.waiting.push(told);
    }

    /// The nodes that serve now: they run, hold a table and their verdict is "serve".
    pub(super) fn serving(&self) -> Vec<usize> {
        (1..NODES)
            .filter(|&n| self.runs(n) && self.nodes[n].table.is_some())
            .filter(|&n| self.nodes[n].own.verdict(P, self.now(n)).serves())
            .collect()
    }

    /// After every step: at most one node serves, and what it serves holds every grant told.
    pub(super) fn check(&self) -> Result<(), String> {
        if let Some(v) = &self.out.violation {
            return Err(v.1.clone());
        }
        let serving = self.serving();
        if serving.len() > 1 {
            let epochs: Vec<Option<u64>> =
                serving.iter().map(|&n| self.nodes[n].own.epoch(P)).collect();
            return Err(format!("nodes {serving:?} serve at once, in epochs {epochs:?}"));
        }
        for &n in &serving {
            let table = self.nodes[n].table.as_ref().expect("serving");
            for key in KEYS {
                let info = table
                    .key_info(&KeyInfoRequest::new(key), self.now_ms(n))
                    .map_err(|e| e.to_string())?;
                let holder: Option<FencingToken> = info.holders.first().map(|h| h.fencing_token);
                self.checker.served_table(n, key, holder)?;
            }
        }
        Ok(())
    }
}
