//! `acl_flight_serve` and `acl_flight_stop`: the node's doors, the runtime they run on, and the
//! refusals before anything binds (spec 018, "Serving").
use super::budget::Budget;
use super::node::{Conn, Node};
use super::{auth, query, Limits};
use crate::engine::State;
use crate::error::{AclError, DoorProblem, Result};
use arrow_flight::flight_service_server::FlightServiceServer;
use dashmap::DashMap;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// How long a stop waits for the server to let go of its connections before it aborts it.
const STOP_WAIT: Duration = Duration::from_secs(5);
/// Largest message a client may send (a parameter or ingest batch).
const MAX_MESSAGE: usize = 256 << 20;

/// The node's doors (in `State::doors`): the settings, the stream budget, the runtime, and the
/// doors serving now by their bound address.
pub struct Doors {
    pub limits: Limits,
    pub(super) budget: Arc<Budget>,
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    served: Mutex<HashMap<SocketAddr, Running>>,
}

struct Running {
    door: Arc<Door>,
    shutdown: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

/// One serving door: what its requests share.
pub(super) struct Door {
    pub state: Weak<State>,
    pub node: Arc<dyn Node>,
    /// The door label its sessions carry (`acl_sessions().door`): `flight:<address>`.
    pub label: String,
    pub budget: Arc<Budget>,
    pub clients: auth::Clients,
    pub tickets: query::Tickets,
    /// Connections running a statement now, by a door-local id: a stop or a cancel interrupts them.
    pub running: DashMap<u64, Arc<dyn Conn>>,
    pub next_id: AtomicU64,
    pub stopping: AtomicBool,
}

impl Door {
    /// The node's state, while the database lives.
    pub fn state(&self) -> std::result::Result<Arc<State>, tonic::Status> {
        match self.state.upgrade() {
            Some(s) if !self.stopping.load(Ordering::Acquire) => Ok(s),
            _ => Err(tonic::Status::unavailable("acl: the Flight SQL door is stopping")),
        }
    }

    /// The door's settings (`acl_max_result_rows`, `acl_flight_stream_idle`).
    pub fn with_limits<T>(&self, f: impl FnOnce(&Limits) -> T) -> Option<T> {
        let state = self.state.upgrade()?;
        Doors::of(&state).map(|d| f(&d.limits))
    }

    pub fn stream_idle(&self) -> Duration {
        Duration::from_secs(self.with_limits(|l| l.stream_idle_secs()).unwrap_or(super::limits::DEFAULT_STREAM_IDLE))
    }

    /// Registers a connection as running; `Registered` unregisters it when dropped.
    pub fn register(self: &Arc<Self>, conn: Arc<dyn Conn>) -> Registered {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.running.insert(id, conn);
        Registered { door: Arc::clone(self), id }
    }
}

pub(super) struct Registered {
    door: Arc<Door>,
    pub id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.door.running.remove(&self.id);
    }
}

impl Default for Doors {
    fn default() -> Doors {
        Doors { limits: Limits::default(), budget: Arc::new(Budget::new(u64::MAX)), runtime: Mutex::new(None), served: Mutex::new(HashMap::new()) }
    }
}

impl Doors {
    /// The node's doors (made on first use).
    pub fn of(state: &State) -> Option<&Doors> {
        state.doors.get_or_init(|| Box::new(Doors::default())).downcast_ref::<Doors>()
    }

    fn handle(&self) -> Result<tokio::runtime::Handle> {
        let mut rt = self.runtime.lock();
        if rt.is_none() {
            let built = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("acl-flight")
                .thread_stack_size(8 << 20)
                .enable_all()
                .build()
                .map_err(|e| AclError::from(DoorProblem::Bind { uri: "the door's runtime".into(), why: e.to_string() }))?;
            *rt = Some(built);
        }
        Ok(rt.as_ref().map(|r| r.handle().clone()).ok_or(AclError::internal("no runtime"))?)
    }

    /// Stops one door: its streams are interrupted, its sessions closed; how many it closed.
    fn stop_one(&self, state: &State, running: Running) -> u64 {
        let Running { door, shutdown, task } = running;
        door.stopping.store(true, Ordering::Release);
        for e in door.running.iter() {
            e.value().interrupt();
        }
        door.tickets.clear();
        let _ = shutdown.send(());
        let closed = state.sessions.close_door(&door.label);
        door.clients.clear();
        let handle = self.runtime.lock().as_ref().map(|r| r.handle().clone());
        match handle {
            // not on one of the runtime's threads (an `ACL NATIVE` call through the door itself):
            // wait for the server to let go of its connections, then abort what is left
            Some(h) if tokio::runtime::Handle::try_current().is_err() => {
                let abort = task.abort_handle();
                if h.block_on(async { tokio::time::timeout(STOP_WAIT, task).await }).is_err() {
                    abort.abort();
                }
            }
            _ => task.abort(),
        }
        closed
    }
}

impl Drop for Doors {
    /// The database closes: every door stops (its streams interrupted) and the runtime's threads end.
    fn drop(&mut self) {
        let served: Vec<Running> = self.served.get_mut().drain().map(|(_, r)| r).collect();
        for Running { door, shutdown, task } in served {
            door.stopping.store(true, Ordering::Release);
            for e in door.running.iter() {
                e.value().interrupt();
            }
            door.tickets.clear();
            door.clients.clear();
            let _ = shutdown.send(());
            task.abort();
        }
        if let Some(rt) = self.runtime.get_mut().take() {
            if tokio::runtime::Handle::try_current().is_ok() {
                // The last reference went on one of the runtime's own threads: it cannot wait
                // for itself; the threads end as soon as this call returns.
                rt.shutdown_background();
            } else {
                rt.shutdown_timeout(STOP_WAIT);
            }
        }
    }
}

/// A URI's address: `grpc://h:p`, `grpc+tcp://h:p`, `grpc+tls://h:p` or `h:p`; and whether the
/// scheme asks for TLS.
fn parse_uri(uri: &str) -> Result<(String, u16, bool)> {
    let bad = |why: &'static str| AclError::from(DoorProblem::Uri { uri: uri.to_string(), why });
    let (rest, tls) = match uri.split_once("://") {
        Some(("grpc" | "grpc+tcp", r)) => (r, false),
        Some(("grpc+tls", r)) => (r, true),
        Some(_) => return Err(bad("the scheme must be grpc, grpc+tcp or grpc+tls")),
        None => (uri, false),
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = rest.rsplit_once(':').ok_or_else(|| bad("it names no port"))?;
    let port: u16 = port.parse().map_err(|_| bad("the port is not a number from 0 to 65535"))?;
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if host.is_empty() || host.contains(['/', '@', '?', '#']) {
        return Err(bad("it names no host"));
    }
    Ok((host.to_string(), port, tls))
}

/// The address a host names (an IP address, or `localhost`), and whether it is loopback.
fn address(uri: &str, host: &str, port: u16) -> Result<SocketAddr> {
    let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
        IpAddr::from([127, 0, 0, 1])
    } else {
        host.parse().map_err(|_| AclError::from(DoorProblem::Uri { uri: uri.to_string(), why: "the host must be an IP address or localhost" }))?
    };
    Ok(SocketAddr::new(ip, port))
}

/// PEM text, or the path of a file holding it.
fn pem(what: &'static str, given: &str) -> Result<Vec<u8>> {
    if given.contains("-----BEGIN") {
        return Ok(given.as_bytes().to_vec());
    }
    std::fs::read(given).map_err(|e| AclError::from(DoorProblem::TlsFile { what, why: e.kind().to_string() }))
}

/// What `acl_flight_serve` needs beyond the URI: the caller's settings, TLS material.
pub struct ServeArgs<'a> {
    pub uri: &'a str,
    pub cert: Option<&'a str>,
    pub key: Option<&'a str>,
    pub anonymous_admin: bool,
    pub strict: bool,
}

/// `acl_flight_serve(uri [, cert, key])`: the URI served (with the port bound, when 0 was asked).
pub fn serve(state: &Arc<State>, node: Arc<dyn Node>, args: ServeArgs<'_>) -> Result<String> {
    if state.store().is_none() {
        return Err(DoorProblem::NoStore.into());
    }
    if args.anonymous_admin {
        return Err(DoorProblem::AnonymousAdmin.into());
    }
    if !args.strict {
        return Err(DoorProblem::NotStrict.into());
    }
    let (host, port, tls_scheme) = parse_uri(args.uri)?;
    let addr = address(args.uri, &host, port)?;
    let tls = match (args.cert, args.key) {
        (Some(c), Some(k)) => Some((pem("certificate", c)?, pem("key", k)?)),
        (None, None) => None,
        _ => return Err(DoorProblem::HalfTls.into()),
    };
    if tls.is_none() && tls_scheme {
        return Err(DoorProblem::HalfTls.into());
    }
    if tls.is_none() && !addr.ip().is_loopback() {
        return Err(DoorProblem::Cleartext { host }.into());
    }
    let doors = Doors::of(state).ok_or(AclError::internal("the node's doors"))?;
    if port != 0 && doors.served.lock().contains_key(&addr) {
        return Err(DoorProblem::AlreadyServed { uri: args.uri.to_string() }.into());
    }
    let listener = TcpListener::bind(addr).map_err(|e| AclError::from(DoorProblem::Bind { uri: args.uri.to_string(), why: e.to_string() }))?;
    let bound = listener.local_addr().map_err(|e| AclError::from(DoorProblem::Bind { uri: args.uri.to_string(), why: e.to_string() }))?;
    listener.set_nonblocking(true).map_err(|e| AclError::from(DoorProblem::Bind { uri: args.uri.to_string(), why: e.to_string() }))?;
    // The budget: the setting, or half of DuckDB's memory_limit, as the door starts.
    let budget = match doors.limits.budget_setting() {
        0 => node.memory_limit() / 2,
        n => n,
    };
    doors.budget.set_limit(budget.max(1 << 20));
    let handle = doors.handle()?;
    let label = format!("flight:{}", bound.to_string().replace(['[', ']'], ""));
    let door = Arc::new(Door {
        state: Arc::downgrade(state),
        node,
        label,
        budget: Arc::clone(&doors.budget),
        clients: auth::Clients::default(),
        tickets: query::Tickets::default(),
        running: DashMap::new(),
        next_id: AtomicU64::new(1),
        stopping: AtomicBool::new(false),
    });
    let service = FlightServiceServer::new(super::service::Service { door: Arc::clone(&door) })
        .max_decoding_message_size(MAX_MESSAGE)
        .max_encoding_message_size(MAX_MESSAGE);
    let mut builder = tonic::transport::Server::builder().tcp_nodelay(true).http2_keepalive_interval(Some(Duration::from_secs(30)));
    if let Some((cert, key)) = &tls {
        let identity = tonic::transport::Identity::from_pem(cert, key);
        builder = builder
            .tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))
            .map_err(|e| AclError::from(DoorProblem::TlsFile { what: "certificate or key", why: e.to_string() }))?;
    }
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let reaper = Arc::clone(&door);
    let task = {
        let _entered = handle.enter();
        let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| AclError::from(DoorProblem::Bind { uri: args.uri.to_string(), why: e.to_string() }))?;
        let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        handle.spawn(async move {
            let reap = query::reap(reaper);
            let served = builder.add_service(service).serve_with_incoming_shutdown(incoming, async {
                let _ = rx.await;
            });
            tokio::select! {
                _ = served => {}
                _ = reap => {}
            }
        })
    };
    doors.served.lock().insert(bound, Running { door, shutdown: tx, task });
    let scheme = if tls.is_some() { "grpc+tls" } else { "grpc" };
    Ok(format!("{scheme}://{bound}"))
}

/// `acl_flight_stop(uri)`: how many sessions it closed.
pub fn stop(state: &State, uri: &str) -> Result<u64> {
    let (host, port, _) = parse_uri(uri)?;
    let addr = address(uri, &host, port)?;
    let doors = Doors::of(state).ok_or(AclError::internal("the node's doors"))?;
    let running = doors.served.lock().remove(&addr).ok_or_else(|| AclError::from(DoorProblem::NotServed { uri: uri.to_string() }))?;
    Ok(doors.stop_one(state, running))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        assert_eq!(parse_uri("grpc://127.0.0.1:0").unwrap(), ("127.0.0.1".into(), 0, false));
        assert_eq!(parse_uri("grpc+tls://[::1]:31337").unwrap(), ("::1".into(), 31337, true));
        assert_eq!(parse_uri("localhost:8815").unwrap(), ("localhost".into(), 8815, false));
        for bad in ["http://127.0.0.1:1", "grpc://127.0.0.1", "grpc://:1", "grpc://127.0.0.1:70000", "grpc://u@h:1"] {
            assert!(matches!(parse_uri(bad), Err(AclError::Door(DoorProblem::Uri { .. }))), "{bad}");
        }
        assert!(address("x", "0.0.0.0", 1).is_ok_and(|a| !a.ip().is_loopback()));
        assert!(address("x", "localhost", 1).is_ok_and(|a| a.ip().is_loopback()));
        assert!(address("x", "example.com", 1).is_err());
    }
}
