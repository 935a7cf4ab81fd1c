//! Groups (docs/LOCK_CORE.md, "Groups"): named sets of members, each member a shared hold of the
//! group's key in [`Scope::Group`] under its lease or session, with its capabilities as the
//! grant's `value` (kept in the election values' side map, `election.rs`).
//!
//! The only state a group adds to the locks is its existence: a group is created and deleted
//! explicitly and exists with no member (as tooz and ZooKeeper groups do), so the names of the
//! partition's groups are kept here, exported with the snapshot and sent whole in a delta when
//! they changed. Everything about members — expiry with their lease or session, replication,
//! fencing tokens, listing — is the lock table's.
//!
//! A group's `version` is a digest of its members (name, token, capabilities), so it changes
//! whenever the membership or a capability does, on every copy alike, without being stored; a
//! watch of the group (`watch.rs`) answers when it is no longer the version the caller knows.

use std::collections::BTreeSet;

use super::grant::same_acquisition;
use super::snapshot::LockSnapshot;
use super::LockTable;
use crate::answer::{GroupInfo, GroupMember};
use crate::error::LockError;
use crate::mode::Mode;
use crate::request::AcquireRequest;
use crate::types::{FencingToken, Scope};
use crate::validate;

/// The groups of a partition, by name, and their bytes (for the memory estimate).
#[derive(Debug, Default)]
pub(super) struct Groups {
    pub(super) names: BTreeSet<Box<str>>,
    pub(super) bytes: usize,
    /// Whether the set changed since the last take of changes (a delta then carries it whole).
    pub(super) changed: bool,
}

/// A group's version: FNV-1a over its members in name order, within 53 bits so that every JSON
/// reader keeps it exact; an existing group's is never 0, which stands for "no group".
fn version_of<'a>(members: impl Iterator<Item = (&'a str, FencingToken, Option<&'a str>)>) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(PRIME);
        }
    };
    for (name, token, value) in members {
        eat(name.as_bytes());
        eat(&[0]);
        eat(&token.0.to_le_bytes());
        eat(value.unwrap_or("").as_bytes());
        eat(&[0xff]);
    }
    (h & ((1 << 53) - 1)).max(1)
}

impl LockTable {
    /// Adds group `name` to the partition's groups ([`LockTable::create_group`]).
    pub(super) fn add_group(&mut self, name: &str) -> Result<(), LockError> {
        validate::name(name, Scope::Group, &self.config.limits)?;
        if self.groups.names.contains(name) {
            return Err(LockError::GroupExists { group: name.to_owned() });
        }
        self.check_memory_room()?;
        self.groups.bytes += name.len();
        self.groups.names.insert(name.into());
        self.groups.changed = true;
        Ok(())
    }

    /// Removes group `name`, which must have no member ([`LockTable::delete_group`]); its
    /// watches fire.
    pub(super) fn remove_group(&mut self, name: &str) -> Result<(), LockError> {
        self.check_group_exists(name)?;
        let members = self.group_members(name).len();
        if members > 0 {
            return Err(LockError::GroupNotEmpty { group: name.to_owned(), members });
        }
        self.groups.names.remove(name);
        self.groups.bytes -= name.len();
        self.groups.changed = true;
        self.fire_group_watches(name);
        Ok(())
    }

    /// The names of the partition's groups, in order ([`LockTable::group_names`]; also what a
    /// snapshot and a delta carry).
    pub(super) fn listed_groups(&self) -> Vec<String> {
        self.groups.names.iter().map(|n| n.to_string()).collect()
    }

    /// Group `name`'s members and version ([`LockTable::group_info`]).
    pub(super) fn describe_group(&self, name: &str) -> Result<GroupInfo, LockError> {
        self.check_group_exists(name)?;
        let members = self.group_members(name);
        Ok(GroupInfo { group: name.to_owned(), version: self.group_version(name), members })
    }

    /// Replaces member `owner`'s capabilities in group `name` ([`LockTable::update_member`]);
    /// the group's watches fire.
    pub(super) fn change_capabilities(
        &mut self,
        name: &str,
        owner: &str,
        capabilities: Option<&str>,
    ) -> Result<GroupMember, LockError> {
        validate::validate_owner(owner)?;
        self.check_group_exists(name)?;
        super::election::check_value(Scope::Group, capabilities)?;
        let not_member = || LockError::NotHeld { key: name.to_owned(), owner: owner.to_owned() };
        let k = self.find_key(Scope::Group, name).ok_or_else(not_member)?;
        let o = self.find_owner(owner).ok_or_else(not_member)?;
        let l = self.find_target_lock(o, k).ok_or_else(not_member)?;
        match capabilities {
            Some(v) => self.election_values.hold(l, v.into()),
            None => self.election_values.unhold(l),
        }
        self.note_lock(l);
        self.fire_group_watches(name);
        self.group_members(name).into_iter().find(|m| m.member == owner).ok_or_else(not_member)
    }

    /// A group's version: a digest of its members; 0 when the group does not exist.
    pub(super) fn group_version(&self, name: &str) -> u64 {
        if !self.groups.names.contains(name) {
            return 0;
        }
        let members = self.group_members(name);
        version_of(
            members.iter().map(|m| (m.member.as_str(), m.fencing_token, m.capabilities.as_deref())),
        )
    }

    /// The members of group `name` in name order (none for a group without a key).
    fn group_members(&self, name: &str) -> Vec<GroupMember> {
        let Some(k) = self.find_key(Scope::Group, name) else { return Vec::new() };
        let mut members: Vec<GroupMember> = self
            .key_state(k)
            .holders
            .iter()
            .map(|h| {
                let lk = self.lock(h.lock);
                GroupMember {
                    member: self.owner_name(lk.owner),
                    fencing_token: lk.token,
                    capabilities: self.election_value(h.lock),
                    lease_ms: self.lease_left(h.lock),
                    session: self.session_name(lk.session),
                }
            })
            .collect();
        members.sort_by(|a, b| a.member.cmp(&b.member));
        members
    }

    /// A join: the group exists, the member holds it shared, and is not a member already under
    /// another acquisition (a retry of the same acquisition gets its membership back).
    pub(super) fn check_group_join(&self, req: &AcquireRequest) -> Result<(), LockError> {
        if req.scope != Scope::Group {
            return Ok(());
        }
        if req.mode != Mode::Shared {
            return Err(LockError::invalid("mode", "a group member holds its group shared"));
        }
        self.check_group_exists(&req.key)?;
        let held = self
            .find_owner(&req.owner)
            .zip(self.find_key(Scope::Group, &req.key))
            .and_then(|(o, k)| self.find_target_lock(o, k));
        let asked = validate::acquisition(req.acquisition.as_deref())?;
        match held {
            Some(l) if !same_acquisition(self.lock(l).acquisition, asked) => {
                Err(LockError::MemberExists { group: req.key.clone(), member: req.owner.clone() })
            }
            _ => Ok(()),
        }
    }

    /// [`LockError::GroupNotFound`] unless group `name` exists.
    pub(super) fn check_group_exists(&self, name: &str) -> Result<(), LockError> {
        if self.groups.names.contains(name) {
            Ok(())
        } else {
            Err(LockError::GroupNotFound { group: name.to_owned() })
        }
    }

    /// Replaces the set of groups by `names` (a snapshot's or a delta's): checked as a
    /// creation's names are.
    pub(super) fn set_groups(&mut self, names: &[String]) -> Result<(), LockError> {
        for n in names {
            validate::name(n, Scope::Group, &self.config.limits)
                .map_err(|e| LockError::invalid("snapshot", format!("group: {e}")))?;
        }
        self.groups.names = names.iter().map(|n| n.as_str().into()).collect();
        self.groups.bytes = self.groups.names.iter().map(|n| n.len()).sum();
        Ok(())
    }

    /// A snapshot's lock of scope group: shared, of a group the snapshot lists (its groups are
    /// imported first).
    pub(super) fn check_imported_member(&self, l: &LockSnapshot) -> Result<(), LockError> {
        if l.scope == Scope::Group
            && (l.mode != Mode::Shared || !self.groups.names.contains(&l.key[..]))
        {
            return Err(LockError::invalid(
                "snapshot",
                format!("member of group [{}], which it does not list, or not shared", l.key),
            ));
        }
        Ok(())
    }

    /// Every member holds a group that exists, and the bytes are counted.
    pub(super) fn check_groups(&self) -> Result<(), String> {
        let counted: usize = self.groups.names.iter().map(|n| n.len()).sum();
        if counted != self.groups.bytes {
            return Err(format!("{counted} bytes of group names, {} counted", self.groups.bytes));
        }
        for lk in self.locks.iter().filter(|l| l.live) {
            let ks = self.key_state(lk.key);
            if ks.scope == Scope::Group && !self.groups.names.contains(&ks.name[..]) {
                return Err(format!("a member of group [{}], which does not exist", &ks.name[..]));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::version_of;
    use crate::types::FencingToken;

    #[test]
    fn a_version_changes_with_a_member_its_token_or_its_capabilities() {
        let none = version_of(std::iter::empty());
        let a = version_of([("a", FencingToken(1), None)].into_iter());
        let a2 = version_of([("a", FencingToken(2), None)].into_iter());
        let ac = version_of([("a", FencingToken(1), Some("x"))].into_iter());
        let versions = [none, a, a2, ac];
        for (i, v) in versions.iter().enumerate() {
            assert!(*v > 0 && *v < (1 << 53), "{v}");
            assert!(!versions[i + 1..].contains(v), "{versions:?}");
        }
    }
}
