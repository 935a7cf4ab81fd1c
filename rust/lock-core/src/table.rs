//! The lock table of one partition: who holds which key, and the fencing counter.
//!
//! Single-threaded by design (`&mut self`); [`crate::Partition`] puts it behind a mutex.

use std::collections::HashMap;

use crate::error::LockError;
use crate::types::{
    validate_key, validate_owner, AcquireRequest, FencingToken, Grant, HolderInfo, KeyInfo, Millis,
    Mode, ReleaseRequest, Released,
};

/// One holder of one key.
#[derive(Debug, Clone)]
struct Holder {
    owner: String,
    mode: Mode,
    token: FencingToken,
    granted_at: Millis,
}

/// The holders of all keys of one partition.
#[derive(Debug)]
pub struct LockTable {
    epoch: u64,
    /// Grants issued in this epoch; the low bits of the next token.
    counter: u64,
    keys: HashMap<String, Vec<Holder>>,
}

impl LockTable {
    /// An empty table whose tokens carry `epoch` in their high bits.
    ///
    /// # Errors
    /// `epoch` must fit [`FencingToken::MAX_EPOCH`].
    pub fn new(epoch: u64) -> Result<Self, LockError> {
        if epoch > FencingToken::MAX_EPOCH {
            return Err(LockError::invalid(
                "epoch",
                format!("must be at most {}, got {epoch}", FencingToken::MAX_EPOCH),
            ));
        }
        Ok(LockTable { epoch, counter: 0, keys: HashMap::new() })
    }

    /// The epoch tokens are issued in.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Number of keys with at least one holder.
    pub fn held_keys(&self) -> usize {
        self.keys.len()
    }

    /// Try-lock: grants at once or fails with [`LockError::Conflict`].
    ///
    /// An owner that already holds the key gets its existing grant back (same token), so a
    /// client may retry an acquire whose answer it lost.
    pub fn try_acquire(&mut self, req: &AcquireRequest, now: Millis) -> Result<Grant, LockError> {
        validate_key(&req.key)?;
        validate_owner(&req.owner)?;
        if let Some(holders) = self.keys.get(&req.key) {
            if let Some(own) = holders.iter().find(|h| h.owner == req.owner) {
                return Ok(Grant {
                    key: req.key.clone(),
                    owner: own.owner.clone(),
                    mode: own.mode,
                    fencing_token: own.token,
                    waited_ms: 0,
                    reentrant: true,
                });
            }
            if !holders.iter().all(|h| h.mode.compatible_with(req.mode)) {
                return Err(LockError::Conflict {
                    key: req.key.clone(),
                    holders: holders.iter().map(|h| holder_info(h, now)).collect(),
                });
            }
        }
        let token = self.next_token()?;
        self.keys.entry(req.key.clone()).or_default().push(Holder {
            owner: req.owner.clone(),
            mode: req.mode,
            token,
            granted_at: now,
        });
        Ok(Grant {
            key: req.key.clone(),
            owner: req.owner.clone(),
            mode: req.mode,
            fencing_token: token,
            waited_ms: 0,
            reentrant: false,
        })
    }

    /// Releases `req.owner`'s hold on `req.key`. Only the holder may release; a token, when
    /// given, must be the holder's current one, so a stale client never frees a newer grant.
    pub fn release(&mut self, req: &ReleaseRequest) -> Result<Released, LockError> {
        validate_key(&req.key)?;
        validate_owner(&req.owner)?;
        let not_held = || LockError::NotHeld { key: req.key.clone(), owner: req.owner.clone() };
        let holders = self.keys.get_mut(&req.key).ok_or_else(not_held)?;
        let pos = holders
            .iter()
            .position(|h| h.owner == req.owner && req.fencing_token.is_none_or(|t| t == h.token))
            .ok_or_else(not_held)?;
        let holder = holders.swap_remove(pos);
        if holders.is_empty() {
            self.keys.remove(&req.key);
        }
        Ok(Released { key: req.key.clone(), owner: holder.owner, fencing_token: holder.token })
    }

    /// The holders of `key` (none when free).
    pub fn key_info(&self, key: &str, now: Millis) -> Result<KeyInfo, LockError> {
        validate_key(key)?;
        let holders = self
            .keys
            .get(key)
            .map(|hs| hs.iter().map(|h| holder_info(h, now)).collect())
            .unwrap_or_default();
        Ok(KeyInfo { key: key.to_owned(), holders })
    }

    fn next_token(&mut self) -> Result<FencingToken, LockError> {
        if self.counter >= FencingToken::MAX_COUNTER {
            // Not reachable in practice (10^12 grants in one epoch); refusing beats wrapping,
            // which would break the strictly-increasing promise.
            return Err(LockError::invalid("epoch", "fencing counter exhausted in this epoch"));
        }
        self.counter += 1;
        Ok(FencingToken::new(self.epoch, self.counter))
    }
}

fn holder_info(h: &Holder, now: Millis) -> HolderInfo {
    HolderInfo {
        owner: h.owner.clone(),
        mode: h.mode,
        fencing_token: h.token,
        held_ms: now.saturating_sub(h.granted_at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acq(key: &str, owner: &str) -> AcquireRequest {
        AcquireRequest { key: key.into(), owner: owner.into(), mode: Mode::Exclusive }
    }

    fn rel(key: &str, owner: &str) -> ReleaseRequest {
        ReleaseRequest { key: key.into(), owner: owner.into(), fencing_token: None }
    }

    #[test]
    fn exclusive_conflicts_with_another_owner_and_names_the_holder() {
        let mut t = LockTable::new(1).expect("epoch");
        let g = t.try_acquire(&acq("k", "a"), 10).expect("free key");
        assert!(!g.reentrant);
        match t.try_acquire(&acq("k", "b"), 15) {
            Err(LockError::Conflict { key, holders }) => {
                assert_eq!(key, "k");
                assert_eq!(holders.len(), 1);
                assert_eq!(holders[0].owner, "a");
                assert_eq!(holders[0].held_ms, 5);
            }
            other => panic!("expected conflict, got {other:?}"),
        }
    }

    #[test]
    fn reacquire_by_holder_returns_same_token() {
        let mut t = LockTable::new(1).expect("epoch");
        let g1 = t.try_acquire(&acq("k", "a"), 0).expect("grant");
        let g2 = t.try_acquire(&acq("k", "a"), 1).expect("reentrant");
        assert!(g2.reentrant);
        assert_eq!(g1.fencing_token, g2.fencing_token);
    }

    #[test]
    fn only_the_holder_releases_and_tokens_grow() {
        let mut t = LockTable::new(3).expect("epoch");
        let g1 = t.try_acquire(&acq("k", "a"), 0).expect("grant");
        assert_eq!(g1.fencing_token.epoch(), 3);
        assert!(matches!(t.release(&rel("k", "b")), Err(LockError::NotHeld { .. })));
        let stale = ReleaseRequest { fencing_token: Some(FencingToken(1)), ..rel("k", "a") };
        assert!(matches!(t.release(&stale), Err(LockError::NotHeld { .. })), "wrong token");
        assert_eq!(t.release(&rel("k", "a")).expect("holder").fencing_token, g1.fencing_token);
        assert_eq!(t.held_keys(), 0);
        assert!(matches!(t.release(&rel("k", "a")), Err(LockError::NotHeld { .. })), "twice");
        let g2 = t.try_acquire(&acq("k", "b"), 1).expect("free again");
        assert!(g2.fencing_token > g1.fencing_token);
    }

    #[test]
    fn shared_holders_coexist_but_exclude_exclusive() {
        let mut t = LockTable::new(1).expect("epoch");
        let shared = |o: &str| AcquireRequest { mode: Mode::Shared, ..acq("k", o) };
        t.try_acquire(&shared("a"), 0).expect("first shared");
        t.try_acquire(&shared("b"), 0).expect("second shared");
        assert!(matches!(t.try_acquire(&acq("k", "c"), 0), Err(LockError::Conflict { .. })));
        assert_eq!(t.key_info("k", 0).expect("info").holders.len(), 2);
    }

    #[test]
    fn bad_input_is_refused_without_touching_state() {
        let mut t = LockTable::new(1).expect("epoch");
        assert_eq!(t.try_acquire(&acq("", "a"), 0).expect_err("key").field(), Some("key"));
        assert_eq!(t.try_acquire(&acq("k", " "), 0).expect_err("owner").field(), Some("owner"));
        assert_eq!(t.held_keys(), 0);
        assert!(LockTable::new(FencingToken::MAX_EPOCH + 1).is_err());
    }
}
