//! What the clients of the model were told, and the rules it must keep: checked after every step
//! of [`super::world::World`]. The history is in real time (the model's, not any node's clock).

use std::collections::BTreeMap;

use lock_core::FencingToken;

/// An answer a node gave a client once the batch carrying it reached every in-sync copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Told {
    /// `owner` holds `key` under `token`.
    Granted { key: String, owner: String, token: FencingToken },
    /// `owner`'s grant `token` of `key` ended.
    Released { key: String, token: FencingToken },
    /// A read of `key` invoked at `invoked` (real ms) showed this holder's token.
    Read { key: String, seen: Option<FencingToken>, invoked: u64 },
}

/// What the history says of one key.
#[derive(Debug, Clone, Default)]
struct KeyHistory {
    /// The grant told last and not told released, if any.
    held: Option<FencingToken>,
    /// The largest token any client was told of for the key.
    highest: Option<FencingToken>,
    /// Per grant told: when (real ms) it was told, and when a release of it was first applied
    /// anywhere (a read after that may no longer show it).
    granted_at: BTreeMap<FencingToken, u64>,
    released_at: BTreeMap<FencingToken, u64>,
    /// Per grant, when its release was told.
    release_told_at: BTreeMap<FencingToken, u64>,
}

/// The history of the run and its rules.
#[derive(Debug, Default)]
pub struct Checker {
    keys: BTreeMap<String, KeyHistory>,
    /// How many answers were told, by kind (a run that tells nothing proves nothing).
    pub grants: u64,
    pub releases: u64,
    pub reads: u64,
}

impl Checker {
    /// A release of `token` of `key` was applied to a table at real time `at` (not yet told).
    pub fn release_applied(&mut self, key: &str, token: FencingToken, at: u64) {
        self.keys.entry(key.to_owned()).or_default().released_at.entry(token).or_insert(at);
    }

    /// A client was told `told` at real time `at`: the rules on what may be told.
    pub fn told(&mut self, told: Told, at: u64) -> Result<(), String> {
        match told {
            Told::Granted { key, owner, token } => {
                self.grants += 1;
                let k = self.keys.entry(key.clone()).or_default();
                if k.held == Some(token) {
                    return Ok(()); // re-entrant: the same grant again
                }
                if let Some(highest) = k.highest {
                    if token <= highest {
                        return Err(format!(
                            "{owner} was granted {key} with {token:?}, not above {highest:?}"
                        ));
                    }
                }
                if let Some(held) = k.held.filter(|held| !k.released_at.contains_key(held)) {
                    // (A release applied but not told may have reached the next owner.)
                    return Err(format!(
                        "{owner} was granted {key} ({token:?}) while {held:?} holds it"
                    ));
                }
                k.held = Some(token);
                k.highest = Some(token);
                k.granted_at.insert(token, at);
            }
            Told::Released { key, token } => {
                self.releases += 1;
                let k = self.keys.entry(key).or_default();
                if k.held == Some(token) {
                    k.held = None;
                }
                k.release_told_at.insert(token, at);
            }
            Told::Read { key, seen, invoked } => {
                self.reads += 1;
                self.check_read(&key, seen, invoked, at)?;
            }
        }
        Ok(())
    }

    /// A read invoked at `invoked` and answered at `answered` is stale when it misses a grant told
    /// before it was invoked whose release no table applied before it was answered, or shows a
    /// grant whose release was told before it was invoked.
    fn check_read(
        &self,
        key: &str,
        seen: Option<FencingToken>,
        invoked: u64,
        answered: u64,
    ) -> Result<(), String> {
        let Some(k) = self.keys.get(key) else { return Ok(()) };
        for (&token, &told) in &k.granted_at {
            let released = k.released_at.get(&token).is_some_and(|&at| at <= answered);
            if told < invoked && !released && seen != Some(token) {
                return Err(format!(
                    "a read of {key} invoked at {invoked} ms showed {seen:?}, not {token:?} granted at {told} ms"
                ));
            }
            if seen == Some(token) && k.release_told_at.get(&token).is_some_and(|&at| at < invoked)
            {
                return Err(format!(
                    "a read of {key} invoked at {invoked} ms showed {token:?}, released before"
                ));
            }
        }
        Ok(())
    }

    /// A node serves `key` with `holder` (its table's): every grant told and not told released
    /// is there, unless a table applied its release (an uncommitted change that a hand-over may
    /// carry on, or a batch a copy took but whose answer was lost); a holder there is never older
    /// than the newest token told.
    pub fn served_table(
        &self,
        node: usize,
        key: &str,
        holder: Option<FencingToken>,
    ) -> Result<(), String> {
        let Some(k) = self.keys.get(key) else { return Ok(()) };
        if let Some(held) = k.held {
            if holder != Some(held) && !k.released_at.contains_key(&held) {
                return Err(format!(
                    "node {node} serves {key} with {holder:?}: the grant {held:?} told is lost"
                ));
            }
        }
        if let (Some(holder), Some(highest)) = (holder, k.highest) {
            if holder < highest {
                return Err(format!(
                    "node {node} serves {key} held by {holder:?}, older than {highest:?} told"
                ));
            }
        }
        Ok(())
    }
}
