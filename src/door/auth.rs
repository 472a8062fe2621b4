//! Who a request is (spec 018, "Authentication"): the bearer token of every call, verified, and
//! the session of the client connection it comes on.
//!
//! A client connection holds one session. It is found by the cookie the door hands back
//! (`acl_flight_session`, for clients that keep cookies) or else by the connection's peer address
//! (one gRPC client connection is one TCP connection). Before a session is honoured the call's
//! token is verified again: a token that does not verify is refused (under
//! `acl_session_token_binding = 'connect'` the token the session was opened with may be past its
//! `exp`, which that binding judges at open only); a token of another principal closes the
//! session and opens its own. A session that ended is reported once (`UNAUTHENTICATED` with the
//! reason) and forgotten, so the client's next call opens a new one if its token still verifies.
use super::node::{Failure, NodeError};
use super::server::Door;
use crate::engine::sessions::{self, Session};
use crate::error::{AclError, Class, SessionProblem, TokenReason};
use dashmap::DashMap;
use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::metadata::MetadataMap;
use tonic::Status;

/// The cookie a door hands back.
pub const COOKIE: &str = "acl_flight_session";
/// How long the door reuses the settings it read from a connection (clock skew, key times).
const SETTINGS_FOR: Duration = Duration::from_secs(1);
/// How long the door remembers a client whose session ended, to tell it why.
const FORGET_AFTER: Duration = Duration::from_secs(600);

/// One client connection's session.
pub(super) struct Client {
    /// The session handle: the door's secret, never sent to the client.
    pub handle: String,
    pub session: Arc<Session>,
    /// The principal the session was opened for (`Principal::to_json`).
    who: String,
    /// SHA-256 of the token the session was opened with.
    token: [u8; 32],
    /// The cookie that names this client (never the handle).
    pub cookie: String,
    peer: Option<String>,
    /// The connection of the client's open transaction (Begin/EndTransaction).
    pub txn: Mutex<Option<(Vec<u8>, Arc<dyn super::node::Conn>)>>,
    /// When a prune first found the session ended (a client that never calls again).
    dead_since: Mutex<Option<Instant>>,
}

impl Client {
    /// `ACL SESSION '<handle>' <sql>`.
    pub fn prefixed(&self, sql: &str) -> String {
        sessions::prefixed(&self.handle, sql)
    }
}

#[derive(Default)]
pub(super) struct Clients {
    by_key: DashMap<String, Arc<Client>>,
    settings: Mutex<Option<(Instant, crate::rewrite::Settings)>>,
}

impl Clients {
    pub fn clear(&self) {
        self.by_key.clear();
    }

    /// Forgets a client (its session ended, or another principal replaced it).
    pub fn forget(&self, c: &Client) {
        self.by_key.remove(&format!("c:{}", c.cookie));
        if let Some(p) = &c.peer {
            self.by_key.remove_if(&format!("p:{p}"), |_, v| v.cookie == c.cookie);
        }
    }

    /// Clients whose sessions ended (idle, killed, expired) long ago are forgotten: a client that
    /// calls again soon is told why first (its next call after that opens a new session).
    pub fn prune(&self, state: &crate::engine::State) {
        let dead: Vec<Arc<Client>> = self
            .by_key
            .iter()
            .filter(|e| state.sessions.reason(&e.value().handle, 0).is_some())
            .filter(|e| e.value().dead_since.lock().get_or_insert_with(Instant::now).elapsed() > FORGET_AFTER)
            .map(|e| Arc::clone(e.value()))
            .collect();
        for c in dead {
            self.forget(&c);
        }
    }

    fn settings(&self, door: &Door) -> Result<crate::rewrite::Settings, Status> {
        if let Some((at, s)) = self.settings.lock().as_ref() {
            if at.elapsed() < SETTINGS_FOR {
                return Ok(s.clone());
            }
        }
        let conn = door.node.connect().map_err(node_status)?;
        let s = conn.settings();
        *self.settings.lock() = Some((Instant::now(), s.clone()));
        Ok(s)
    }
}

fn bearer(md: &MetadataMap) -> Result<String, Status> {
    let value = md.get("authorization").and_then(|v| v.to_str().ok()).ok_or_else(|| Status::unauthenticated("acl: the door needs an authorization header: Bearer <token>"))?;
    let (scheme, token) = value.trim().split_once(' ').ok_or_else(|| Status::unauthenticated("acl: the authorization header must be: Bearer <token>"))?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(Status::unauthenticated("acl: the authorization header must be: Bearer <token>"));
    }
    Ok(token.trim().to_string())
}

fn cookie(md: &MetadataMap) -> Option<String> {
    md.get_all("cookie").iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(';')).find_map(|kv| {
        let (k, v) = kv.trim().split_once('=')?;
        (k == COOKIE && v.len() == 32 && v.bytes().all(|b| b.is_ascii_hexdigit())).then(|| v.to_string())
    })
}

fn random_hex() -> Result<String, Status> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|_| Status::internal("acl: internal error: the operating system gave no random bytes"))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// The status a refusal of ours reaches the client with.
pub(super) fn status_of(e: &AclError) -> Status {
    let text = e.to_string();
    match e {
        AclError::TokenRejected { .. } | AclError::SessionRefused { .. } | AclError::SessionEnded { .. } => Status::unauthenticated(text),
        AclError::Session(SessionProblem::AtCap { .. } | SessionProblem::GroupsFull { .. }) => Status::resource_exhausted(text),
        _ => match e.class() {
            Class::Refused => Status::permission_denied(text),
            Class::Syntax | Class::Invalid => Status::invalid_argument(text),
            Class::Internal => Status::internal(text),
        },
    }
}

/// The status DuckDB's failure of a statement reaches the client with (its message as DuckDB gave
/// it: our refusals are `acl:` messages that name only what the principal may see).
pub(super) fn node_status(e: NodeError) -> Status {
    let m = e.message;
    let session = m.contains("acl: session refused") || m.contains("acl: token rejected") || m.contains("acl: the session this statement was prepared under");
    match e.failure {
        Failure::Permission if session => Status::unauthenticated(m),
        Failure::Permission => Status::permission_denied(m),
        Failure::Invalid => Status::invalid_argument(m),
        Failure::Interrupted => Status::cancelled(m),
        Failure::Unavailable => Status::unavailable(m),
        Failure::Other => Status::internal(m),
    }
}

/// The session of the call whose metadata is `md`, from peer `peer`: the client's, or a new one.
/// Blocking (it may read the node's settings): run it off the runtime's workers.
pub(super) fn client(door: &Door, md: &MetadataMap, peer: Option<String>) -> Result<Arc<Client>, Status> {
    let token = bearer(md)?;
    let state = door.state()?;
    let settings = door.clients.settings(door)?;
    let policy = state.policy();
    let now = sessions::now_ms() / 1000;
    let verified = state.tokens.verified(&policy, &token, now, settings.clock_skew, settings.key_times);
    let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    let keys: Vec<String> = cookie(md).map(|c| format!("c:{c}")).into_iter().chain(peer.as_ref().map(|p| format!("p:{p}"))).collect();
    let found = keys.iter().find_map(|k| door.clients.by_key.get(k).map(|c| Arc::clone(&c)));
    if let Some(c) = found {
        let same = match &verified {
            Ok((p, _)) => p.to_json() == c.who,
            // 'connect' judges exp at open: the token the session was opened with still names it
            Err(AclError::TokenRejected { reason: TokenReason::Expired }) if !state.sessions.every_use() && digest == c.token => true,
            Err(e) => return Err(status_of(e)),
        };
        if same {
            return match state.sessions.reason(&c.handle, settings.clock_skew) {
                None => Ok(c),
                Some(reason) => {
                    door.clients.forget(&c);
                    Err(status_of(&AclError::SessionRefused { reason }))
                }
            };
        }
        // another principal on this client connection: its session replaces the old one
        state.sessions.close(&c.handle);
        door.clients.forget(&c);
    }
    let (principal, _) = verified.map_err(|e| status_of(&e))?;
    let (handle, session) = sessions::open(&state, &token, &door.label, &settings).map_err(|e| status_of(&e))?;
    let c = Arc::new(Client {
        handle: handle.expose().to_string(),
        session,
        who: principal.to_json(),
        token: digest,
        cookie: random_hex()?,
        peer: peer.clone(),
        txn: Mutex::new(None),
        dead_since: Mutex::new(None),
    });
    door.clients.by_key.insert(format!("c:{}", c.cookie), Arc::clone(&c));
    if let Some(p) = peer {
        door.clients.by_key.insert(format!("p:{p}"), Arc::clone(&c));
    }
    Ok(c)
}

/// A session that ended while a statement of the client ran (the statement was refused
/// `UNAUTHENTICATED`): the client is forgotten, so its next call opens a new session.
pub(super) fn after(door: &Door, c: &Client, status: &Status) {
    if status.code() == tonic::Code::Unauthenticated {
        door.clients.forget(c);
    }
}

