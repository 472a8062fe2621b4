//! Sessions (spec 017): a verified token turned into a principal once, named by a handle.
//!
//! A door (or the gateway, through `acl_session_open`) verifies a token once and gets a handle;
//! every later statement is prefixed `ACL SESSION '<handle>'` and takes the gateway's path with
//! the principal the token gave at open. Identity is fixed at open, rights are the policy's at
//! each statement (`rewrite` judges the principal's roles per statement, as for `ACL ROLE`).
//!
//! The handle is 128 bits from the operating system's CSPRNG (`getrandom`), written as 32
//! lower-case hex digits. The map is keyed by the SHA-256 of those bits, and the stored bits are
//! compared in constant time (`subtle`) once found, so neither the lookup nor the comparison
//! tells an attacker how close a guess came. The handle is never stored anywhere DuckDB shows:
//! statements carry the session's operator id in their tag (`/* acl:… session=<id> */`), a
//! management batch names it by id (`acl_exec_as('session', '<id>', …)`), and listings show the
//! id only. Sessions belong to the database instance's `State` (two instances in one process
//! share nothing) and to the node (a PostgreSQL policy store shares the policy, not sessions).
//!
//! The statement path takes no lock of ours: the maps are `DashMap`s (a shard read lock per
//! lookup), the settings and each session's clock are atomics.
use crate::admin::resource_groups::most_generous;
use crate::authz::Principal;
use crate::policy::ResourceGroup;
use crate::error::{AclError, Result, SessionProblem, SessionReason};
use dashmap::DashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// `acl_session_idle_timeout`'s default, seconds.
pub const DEFAULT_IDLE_TIMEOUT: u64 = 900;
/// `acl_max_sessions`'s default.
pub const DEFAULT_MAX_SESSIONS: u64 = 1000;
/// The largest `acl_session_idle_timeout` taken (a century): the clock's arithmetic never overflows.
pub const MAX_IDLE_TIMEOUT: u64 = 100 * 365 * 24 * 3600;
/// The door label of a session opened with `acl_session_open(token)`.
pub const SQL_DOOR: &str = "sql";
/// An ended session is remembered (for its reason) this long, and at most this many of them (the
/// oldest forgotten as another ends); after that its handle is `unknown`.
const TOMBSTONE_MS: i64 = 3_600_000;
/// An open sweeps on its own at most this often, so sessions nobody closes do not pile up.
const SWEEP_EVERY_MS: i64 = 30_000;

/// Operator ids: unique in the process, never reused, so a statement's tag never names another
/// instance's (or a later) session.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

const LIVE: u8 = 0;

/// A session handle: its text is the secret. `Debug` never shows it.
pub struct Handle(String);

impl Handle {
    /// The handle's text, for the caller who asked for the session (and no one else).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Handle(…)")
    }
}

/// One session: what the token gave at open, and its clock.
pub struct Session {
    /// The operator id (`acl_sessions().id`): never the handle.
    pub id: u64,
    secret: [u8; 16],
    pub principal: Principal,
    pub subject: Option<String>,
    pub issuer: String,
    pub door: String,
    /// Unix milliseconds.
    pub opened_ms: i64,
    last_used_ms: AtomicI64,
    /// The token's `exp`, unix seconds.
    pub exp: i64,
    /// Who owns a transaction the session begins (`engine::owner`'s form: 32 hex digits), drawn
    /// at random: no function of the handle.
    pub owner: String,
    /// The resource groups the session was opened under (its roles' groups at open), and the
    /// limits it took from them, the most generous winning (`None`: no limit), for a door.
    pub groups: Vec<String>,
    pub max_result_rows: Option<u64>,
    pub max_stream_bytes: Option<u64>,
    end: AtomicU8,
    ended_ms: AtomicI64,
    /// The token it was opened with, kept in the node's memory only (never listed, never in an
    /// error or a text DuckDB keeps): what its issuer's changes are judged against, and what a
    /// management batch of the session maps again (`session_vouch`, spec 017).
    token: String,
    /// The policy version its token last verified under (`session_vouch::vouched`).
    vouched_at: AtomicU64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Session({})", self.id)
    }
}

impl Session {
    pub fn last_used_ms(&self) -> i64 {
        self.last_used_ms.load(Ordering::Relaxed)
    }

    fn ended(&self) -> Option<SessionReason> {
        reason_of(self.end.load(Ordering::Acquire))
    }

    /// The token the session was opened with (empty for one opened without, in tests).
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    pub(crate) fn vouched_at(&self) -> u64 {
        self.vouched_at.load(Ordering::Acquire)
    }

    pub(crate) fn vouch(&self, version: u64) {
        self.vouched_at.store(version, Ordering::Release);
    }
}

fn code_of(r: SessionReason) -> u8 {
    match r {
        SessionReason::Closed => 1,
        SessionReason::Idle => 2,
        SessionReason::Expired => 3,
        SessionReason::Killed => 4,
        SessionReason::Unknown => 5,
        SessionReason::Revoked => 6,
    }
}

fn reason_of(code: u8) -> Option<SessionReason> {
    match code {
        LIVE => None,
        1 => Some(SessionReason::Closed),
        2 => Some(SessionReason::Idle),
        3 => Some(SessionReason::Expired),
        4 => Some(SessionReason::Killed),
        6 => Some(SessionReason::Revoked),
        _ => Some(SessionReason::Unknown),
    }
}

/// A live session as `acl_sessions()` lists it.
pub struct Listed {
    pub session: Arc<Session>,
    pub idle_seconds: i64,
}

/// The node's sessions and the three GLOBAL settings that rule them.
pub struct Sessions {
    by_key: DashMap<[u8; 32], Arc<Session>>,
    by_id: DashMap<u64, Arc<Session>>,
    live: AtomicUsize,
    /// Live sessions per resource group (a session counts in each of its groups).
    in_group: DashMap<String, u64>,
    idle_timeout: AtomicU64,
    max_sessions: AtomicU64,
    every_use: AtomicBool,
    last_sweep_ms: AtomicI64,
    /// Ended sessions still remembered, in the order they ended (at most 10 000).
    graves: super::session_graves::Graves,
}

impl Default for Sessions {
    fn default() -> Sessions {
        Sessions {
            by_key: DashMap::new(),
            by_id: DashMap::new(),
            live: AtomicUsize::new(0),
            in_group: DashMap::new(),
            idle_timeout: AtomicU64::new(DEFAULT_IDLE_TIMEOUT),
            max_sessions: AtomicU64::new(DEFAULT_MAX_SESSIONS),
            every_use: AtomicBool::new(false),
            last_sweep_ms: AtomicI64::new(0),
            graves: Default::default(),
        }
    }
}

/// A setting's value as it is kept, or why it is refused (`set`).
pub fn validate(setting: &str, value: &str) -> Result<String> {
    let bad = |setting: &'static str, expected: &'static str| AclError::from(SessionProblem::Setting { setting, expected });
    match setting {
        "acl_session_idle_timeout" => match value.trim().parse::<u64>() {
            Ok(v) if v <= MAX_IDLE_TIMEOUT => Ok(v.to_string()),
            _ => Err(bad("acl_session_idle_timeout", "a number of seconds from 0 (never) to 3153600000")),
        },
        "acl_max_sessions" => match value.trim().parse::<u64>() {
            Ok(v) if v <= u32::MAX as u64 => Ok(v.to_string()),
            _ => Err(bad("acl_max_sessions", "a number of sessions from 0 (no cap) to 4294967295")),
        },
        "acl_session_token_binding" => match value.trim().to_ascii_lowercase().as_str() {
            b @ ("connect" | "every_use") => Ok(b.to_string()),
            _ => Err(bad("acl_session_token_binding", "'connect' or 'every_use'")),
        },
        _ => Err(AclError::internal("not a session setting")),
    }
}

impl Sessions {
    /// Takes a GLOBAL setting's new value (the shim's `OnSet`), validated; the value kept.
    pub fn set(&self, setting: &str, value: &str) -> Result<String> {
        let kept = validate(setting, value)?;
        match setting {
            "acl_session_idle_timeout" => self.idle_timeout.store(kept.parse().unwrap_or(DEFAULT_IDLE_TIMEOUT), Ordering::Relaxed),
            "acl_max_sessions" => self.max_sessions.store(kept.parse().unwrap_or(DEFAULT_MAX_SESSIONS), Ordering::Relaxed),
            _ => self.every_use.store(kept == "every_use", Ordering::Relaxed),
        }
        Ok(kept)
    }

    pub fn idle_timeout(&self) -> u64 {
        self.idle_timeout.load(Ordering::Relaxed)
    }

    pub fn every_use(&self) -> bool {
        self.every_use.load(Ordering::Relaxed)
    }

    /// Opens a session for `principal` (verified from a token with `exp`, `subject` and
    /// `issuer`), unless the node is at `acl_max_sessions`; its handle and record.
    pub fn open(&self, principal: Principal, exp: i64, subject: Option<String>, issuer: String, door: &str, skew: u64) -> Result<(Handle, Arc<Session>)> {
        self.open_in(principal, exp, subject, issuer, door, skew, &[], (String::new(), 0))
    }

    /// `open`, under the resource groups `groups` (the principal's roles' groups and their
    /// limits, `admin::resource_groups::resolve`): refused when every group is at its
    /// `max_sessions` — the most generous group admits it — and counted in each.
    #[allow(clippy::too_many_arguments)]
    pub fn open_in(
        &self,
        principal: Principal,
        exp: i64,
        subject: Option<String>,
        issuer: String,
        door: &str,
        skew: u64,
        groups: &[(String, ResourceGroup)],
        (token, version): (String, u64),
    ) -> Result<(Handle, Arc<Session>)> {
        check_door(door)?;
        let now = now_ms();
        self.maybe_sweep(now, skew);
        self.reserve(now, skew)?;
        if let Err(e) = self.reserve_groups(groups, now, skew) {
            self.live.fetch_sub(1, Ordering::AcqRel);
            return Err(e);
        }
        let names: Vec<String> = groups.iter().map(|(n, _)| n.clone()).collect();
        let made = (|| -> Result<(Handle, Arc<Session>)> {
            let mut secret = [0u8; 16];
            let mut owner = [0u8; 16];
            getrandom::fill(&mut secret).and_then(|()| getrandom::fill(&mut owner)).map_err(|_| AclError::internal("the operating system gave no random bytes"))?;
            let session = Arc::new(Session {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                secret,
                principal,
                subject,
                issuer,
                door: door.to_string(),
                opened_ms: now,
                last_used_ms: AtomicI64::new(now),
                exp,
                owner: hex(&owner),
                groups: names.clone(),
                max_result_rows: most_generous(groups, |g| g.max_result_rows),
                max_stream_bytes: most_generous(groups, |g| g.max_stream_bytes),
                end: AtomicU8::new(LIVE),
                ended_ms: AtomicI64::new(0),
                token,
                vouched_at: AtomicU64::new(version),
            });
            self.by_id.insert(session.id, Arc::clone(&session));
            self.by_key.insert(key_of(&secret), Arc::clone(&session));
            Ok((Handle(hex(&secret)), session))
        })();
        if made.is_err() {
            self.live.fetch_sub(1, Ordering::AcqRel);
            self.leave_groups(&names);
        }
        made
    }

    /// Counts a new session into each of `groups`, if one of them admits it: a group without
    /// `max_sessions`, or one below it (checked and counted under that group's entry, so
    /// concurrent opens never pass it). Else the sessions whose time ran out are ended and the
    /// groups asked again once; then refused.
    fn reserve_groups(&self, groups: &[(String, ResourceGroup)], now: i64, skew: u64) -> Result<()> {
        if groups.is_empty() {
            return Ok(());
        }
        for attempt in 0..2 {
            let admitted = groups.iter().position(|(name, g)| {
                let mut n = self.in_group.entry(name.clone()).or_insert(0);
                let room = g.max_sessions.is_none_or(|max| *n < max);
                if room {
                    *n += 1;
                }
                room
            });
            if let Some(i) = admitted {
                for (j, (name, _)) in groups.iter().enumerate() {
                    if j != i {
                        *self.in_group.entry(name.clone()).or_insert(0) += 1;
                    }
                }
                return Ok(());
            }
            if attempt == 0 {
                self.end_due(now, skew, false);
            }
        }
        let names = groups.iter().map(|(n, _)| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
        Err(SessionProblem::GroupsFull { groups: names }.into())
    }

    fn leave_groups(&self, names: &[String]) {
        for name in names {
            if let Some(mut n) = self.in_group.get_mut(name) {
                *n = n.saturating_sub(1);
            }
        }
    }

    /// Live sessions counted in resource group `name`.
    pub fn in_group(&self, name: &str) -> u64 {
        self.in_group.get(name).map_or(0, |n| *n)
    }

    /// Counts a new session in, or refuses it at the cap (after ending what has run out: an
    /// idle or expired session is already over, never a live one evicted).
    fn reserve(&self, now: i64, skew: u64) -> Result<()> {
        let mut swept = false;
        loop {
            let max = self.max_sessions.load(Ordering::Relaxed);
            let n = self.live.load(Ordering::Acquire);
            if max != 0 && n as u64 >= max {
                if swept {
                    return Err(SessionProblem::AtCap { max }.into());
                }
                self.end_due(now, skew, false);
                swept = true;
                continue;
            }
            if self.live.compare_exchange(n, n + 1, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                return Ok(());
            }
        }
    }

    /// The session `handle` names, if this node has one by that handle (live or remembered).
    fn find(&self, handle: &str) -> Option<Arc<Session>> {
        let secret = unhex(handle)?;
        let found = self.by_key.get(&key_of(&secret)).map(|s| Arc::clone(&s))?;
        bool::from(found.secret.ct_eq(&secret)).then_some(found)
    }

    /// Why `s` runs nothing now, ending it if its time ran out (`skew`: `acl_jwt_clock_skew`, for
    /// the token's `exp` under `every_use`); `None`: live.
    fn judge(&self, s: &Session, now: i64, skew: u64) -> Option<SessionReason> {
        if let Some(r) = s.ended() {
            return Some(r);
        }
        let due = self.due(s, now, skew)?;
        self.end(s, due, now);
        // Another thread may have ended it first, for another reason: report the one recorded.
        s.ended().or(Some(due))
    }

    /// Whether `s`'s time ran out (without ending it).
    fn due(&self, s: &Session, now: i64, skew: u64) -> Option<SessionReason> {
        let idle = self.idle_timeout.load(Ordering::Relaxed);
        if idle > 0 && now.saturating_sub(s.last_used_ms()) > (idle as i64).saturating_mul(1000) {
            return Some(SessionReason::Idle);
        }
        let skew = i64::try_from(skew).unwrap_or(i64::MAX);
        if self.every_use() && s.exp.saturating_add(skew) < now / 1000 {
            return Some(SessionReason::Expired);
        }
        None
    }

    /// Ends `s` for `reason`; true if this call ended it (it was live).
    fn end(&self, s: &Session, reason: SessionReason, now: i64) -> bool {
        let ended = s.end.compare_exchange(LIVE, code_of(reason), Ordering::AcqRel, Ordering::Acquire).is_ok();
        if ended {
            s.ended_ms.store(now, Ordering::Release);
            self.live.fetch_sub(1, Ordering::AcqRel);
            self.leave_groups(&s.groups);
            self.graves.bury(s.id, |id| self.forget(id));
        }
        ended
    }

    /// Ends `s` for `reason` (if live); the reason it ended for, whoever ended it.
    pub(crate) fn end_for(&self, s: &Session, reason: SessionReason) -> SessionReason {
        self.end(s, reason, now_ms());
        s.ended().unwrap_or(reason)
    }

    fn forget(&self, id: u64) {
        if let Some((_, s)) = self.by_id.remove(&id) {
            self.by_key.remove(&key_of(&s.secret));
        }
    }

    /// The session by operator id (live or remembered).
    pub(crate) fn by_id(&self, id: u64) -> Option<Arc<Session>> {
        self.by_id.get(&id).map(|s| Arc::clone(&s))
    }

    /// A statement under `handle`: the session if it is live (and now used), else the reason.
    pub fn enter(&self, handle: &str, skew: u64) -> Result<Arc<Session>> {
        let s = self.find(handle).ok_or(AclError::SessionRefused { reason: SessionReason::Unknown })?;
        self.use_session(&s, skew).map_err(|reason| AclError::SessionRefused { reason })?;
        Ok(s)
    }

    /// `s` runs a statement now (a kept statement, or a batch from a cache): live and used, or
    /// the reason it is not.
    pub fn use_session(&self, s: &Session, skew: u64) -> std::result::Result<(), SessionReason> {
        let now = now_ms();
        if let Some(r) = self.judge(s, now, skew) {
            return Err(r);
        }
        s.last_used_ms.fetch_max(now, Ordering::Relaxed);
        Ok(())
    }

    /// A statement kept from session `id` (its tag) runs now: `enter` by id.
    pub fn enter_id(&self, id: u64, skew: u64) -> Result<()> {
        let s = self.by_id.get(&id).map(|s| Arc::clone(&s));
        let s = s.ok_or(AclError::SessionEnded { reason: SessionReason::Unknown })?;
        self.use_session(&s, skew).map_err(|reason| AclError::SessionEnded { reason })
    }

    /// The handle of live session `id`, for a management batch it wrote (`acl_exec_as('session',
    /// '<id>', …)`), which then judges it as any statement of the session is judged.
    pub fn handle_of(&self, id: u64) -> Result<Handle> {
        let s = self.by_id.get(&id).map(|s| Arc::clone(&s));
        let s = s.ok_or(AclError::SessionRefused { reason: SessionReason::Unknown })?;
        Ok(Handle(hex(&s.secret)))
    }

    /// `acl_session_close(handle)`: true if this call closed a live session.
    pub fn close(&self, handle: &str) -> bool {
        self.find(handle).is_some_and(|s| self.end(&s, SessionReason::Closed, now_ms()))
    }

    /// Closes every live session opened through `door` (a door that stops); how many it closed.
    pub fn close_door(&self, door: &str) -> u64 {
        let now = now_ms();
        let theirs: Vec<Arc<Session>> = self.by_id.iter().filter(|e| e.value().door == door).map(|e| Arc::clone(e.value())).collect();
        theirs.iter().map(|s| u64::from(self.end(s, SessionReason::Closed, now))).sum()
    }

    /// `acl_session_kill(id)`: true if this call ended a live session.
    pub fn kill(&self, id: u64) -> bool {
        let s = self.by_id.get(&id).map(|s| Arc::clone(&s));
        s.is_some_and(|s| self.end(&s, SessionReason::Killed, now_ms()))
    }

    /// `acl_session_reason(handle)`: `None` for a live session. Read-only: neither uses the
    /// session nor ends it (a session whose time ran out reads as ended all the same).
    pub fn reason(&self, handle: &str, skew: u64) -> Option<SessionReason> {
        let Some(s) = self.find(handle) else { return Some(SessionReason::Unknown) };
        s.ended().or_else(|| self.due(&s, now_ms(), skew))
    }

    /// Ends every live session whose time ran out; how many it ended. With `prune`, also forgets
    /// sessions ended longer ago than the node remembers them.
    fn end_due(&self, now: i64, skew: u64, prune: bool) -> u64 {
        let mut ended = 0;
        let sessions: Vec<Arc<Session>> = self.by_id.iter().map(|e| Arc::clone(e.value())).collect();
        for s in &sessions {
            if s.ended().is_none() {
                if let Some(r) = self.due(s, now, skew) {
                    ended += u64::from(self.end(s, r, now));
                }
            }
        }
        if prune {
            // Ended in order: forget from the oldest while they ended over `TOMBSTONE_MS` ago.
            let long_ago = |id: u64| self.by_id.get(&id).is_none_or(|s| s.ended_ms.load(Ordering::Acquire) < now - TOMBSTONE_MS);
            while self.graves.forget_oldest(long_ago, |id| self.forget(id)) {}
        }
        ended
    }

    /// `acl_session_sweep()`: ends every session idle past the timeout or (under `every_use`)
    /// past its token's `exp`, and forgets long-ended ones; how many it ended.
    pub fn sweep(&self, skew: u64) -> u64 {
        let now = now_ms();
        self.last_sweep_ms.store(now, Ordering::Relaxed);
        self.end_due(now, skew, true)
    }

    fn maybe_sweep(&self, now: i64, skew: u64) {
        let last = self.last_sweep_ms.load(Ordering::Relaxed);
        if now - last > SWEEP_EVERY_MS && self.last_sweep_ms.compare_exchange(last, now, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            self.end_due(now, skew, true);
        }
    }

    /// `acl_session_count()`: the live sessions (those whose time ran out are ended first).
    pub fn count(&self, skew: u64) -> u64 {
        self.end_due(now_ms(), skew, false);
        self.live.load(Ordering::Acquire) as u64
    }

    /// `acl_sessions()`: one entry per live session, by id.
    pub fn list(&self, skew: u64) -> Vec<Listed> {
        let now = now_ms();
        self.end_due(now, skew, false);
        let mut out: Vec<Listed> = self
            .by_id
            .iter()
            .filter(|e| e.value().ended().is_none())
            .map(|e| Listed { session: Arc::clone(e.value()), idle_seconds: (now - e.value().last_used_ms()).max(0) / 1000 })
            .collect();
        out.sort_by_key(|l| l.session.id);
        out
    }
}

/// `acl_session_open(token[, door])` and a door's open: the token verified as `ACL TOKEN` verifies
/// it (a refusal names the reason, never the token), its principal resolved once.
pub fn open(state: &super::State, jwt: &str, door: &str, settings: &crate::rewrite::Settings) -> Result<(Handle, Arc<Session>)> {
    let policy = state.policy();
    let now = now_ms() / 1000;
    let (principal, exp) = state.tokens.verified(&policy, jwt, now, settings.clock_skew, settings.key_times)?;
    // Only read once the token verified: these are the claims its signature covers.
    let claims: serde_json::Value = jsonwebtoken::dangerous::insecure_decode_claims(jwt).unwrap_or_default();
    let text = |k: &str| claims.get(k).and_then(serde_json::Value::as_str).map(str::to_owned);
    // The groups and their limits as the policy has them now (resource groups, spec 017).
    let groups = crate::admin::resource_groups::resolve(&policy, principal.roles.iter().map(String::as_str));
    let vouch = (jwt.to_string(), policy.version);
    state.sessions.open_in(principal, exp, text("sub"), text("iss").unwrap_or_default(), door, settings.clock_skew, &groups, vouch)
}

/// `acl_session_sql(handle, sql)`: the statement prefixed with the session, the handle quoted as
/// a SQL string.
pub fn prefixed(handle: &str, sql: &str) -> String {
    format!("ACL SESSION {} {sql}", crate::sqltext::literal(handle))
}

fn check_door(door: &str) -> Result<()> {
    let ok = !door.is_empty() && door.len() <= 64 && door.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.:".contains(&b));
    if ok { Ok(()) } else { Err(SessionProblem::Door.into()) }
}

fn key_of(secret: &[u8; 16]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"acl-session\0");
    h.update(secret);
    h.finalize().into()
}

fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

/// A handle's bits: exactly 32 lower-case hex digits (any other text names no session).
fn unhex(text: &str) -> Option<[u8; 16]> {
    let b = text.as_bytes();
    if b.len() != 32 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 16];
    for (i, pair) in b.chunks_exact(2).enumerate() {
        out[i] = (digit(pair[0])? << 4) | digit(pair[1])?;
    }
    Some(out)
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod tests;
