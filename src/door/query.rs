//! Statements through the door (spec 018, "Statements"): a statement starts at GetFlightInfo (so
//! a refusal reaches the client there), its running result waits under a ticket, and DoGet
//! streams it. A ticket is single-use and bound to its session; a ticket nobody fetched within
//! `acl_flight_stream_idle` is dropped (its query interrupted).
//!
//! Streaming: a blocking thread fetches DuckDB's chunks (one chunk, one record batch, converted
//! by DuckDB) and hands them over a channel of two batches to the response. Each batch holds its
//! bytes of the node's budget until it is handed to the encoder. A client that stops reading
//! stops the thread: the send waits at most `acl_flight_stream_idle`, then the stream is cut
//! off and the query interrupted. A stream that ends early, is cancelled or is dropped by the
//! client interrupts its query the same way.
use super::auth::{self, node_status, status_of, Client};
use super::budget::Held;
use super::node::{Conn, Param, Rows};
use super::server::{Door, Registered};
use crate::error::{AclError, DoorProblem};
use arrow_array::RecordBatch;
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_schema::SchemaRef;
use dashmap::DashMap;
use futures::{Stream, StreamExt};
use parking_lot::Mutex;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::Status;

pub(super) type Id = [u8; 16];

/// A started statement waiting for its DoGet.
pub(super) struct Parked {
    client: Arc<Client>,
    rows: Mutex<Box<dyn Rows>>,
    conn: Arc<dyn Conn>,
    _registered: Registered,
    at: Instant,
}

/// A prepared statement of a session: its text, and the parameters the client bound last.
pub(super) struct Prepared {
    pub session: u64,
    pub sql: String,
    /// The client's transaction it was prepared in: its executions run in it.
    pub txn: Option<Vec<u8>>,
    pub params: Mutex<Vec<Vec<Param>>>,
}

#[derive(Default)]
pub(super) struct Tickets {
    parked: DashMap<Id, Parked>,
    pub prepared: DashMap<Id, Arc<Prepared>>,
    /// Running streams by ticket (for CancelFlightInfo): the connection to interrupt.
    streaming: DashMap<Id, Arc<dyn Conn>>,
}

impl Tickets {
    pub fn clear(&self) {
        for e in self.parked.iter() {
            e.value().conn.interrupt();
        }
        self.parked.clear();
        self.prepared.clear();
    }

    /// CancelFlightInfo: interrupts the statement of ticket `id` of this session (parked or
    /// streaming); false if the session has no such ticket.
    pub fn cancel(&self, client: &Client, id: &Id) -> bool {
        if let Some((_, p)) = self.parked.remove_if(id, |_, p| p.client.session.id == client.session.id) {
            p.conn.interrupt();
            return true;
        }
        if let Some(c) = self.streaming.get(id) {
            c.interrupt();
            return true;
        }
        false
    }
}

pub(super) fn new_id() -> Result<Id, Status> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|_| Status::internal("acl: internal error: the operating system gave no random bytes"))?;
    Ok(b)
}

/// The connection a statement of `client` runs on: its transaction's, or a new one.
pub(super) fn conn_for(door: &Door, client: &Client, txn: Option<&[u8]>) -> Result<Arc<dyn Conn>, Status> {
    let open = client.txn.lock();
    match (txn, open.as_ref()) {
        (Some(t), Some((id, c))) if t == id.as_slice() => Ok(Arc::clone(c)),
        (Some(_), _) => Err(Status::invalid_argument("acl: the session has no such transaction")),
        (None, _) => {
            drop(open);
            door.node.connect().map_err(node_status)
        }
    }
}

/// Runs `sql` of `client` (blocking) and parks its result; the ticket and the result's schema.
pub(super) fn start(door: &Arc<Door>, client: &Arc<Client>, sql: &str, params: &[Param], txn: Option<&[u8]>) -> Result<(Id, SchemaRef), Status> {
    let conn = conn_for(door, client, txn)?;
    let registered = door.register(Arc::clone(&conn));
    let rows = Arc::clone(&conn).run(&client.prefixed(sql), params).map_err(|e| {
        let s = node_status(e);
        auth::after(door, client, &s);
        s
    })?;
    let schema = rows.schema();
    let id = new_id()?;
    door.tickets.parked.insert(id, Parked { client: Arc::clone(client), rows: Mutex::new(rows), conn, _registered: registered, at: Instant::now() });
    Ok((id, schema))
}

/// Runs `sql` of `client` to its end (blocking): what DuckDB's result counts (a write's rows),
/// or 0 for a statement with no count.
pub(super) fn execute(door: &Arc<Door>, client: &Client, sql: &str, params: &[Param], txn: Option<&[u8]>) -> Result<i64, Status> {
    let conn = conn_for(door, client, txn)?;
    let _registered = door.register(Arc::clone(&conn));
    let fail = |e| {
        let s = node_status(e);
        auth::after(door, client, &s);
        s
    };
    let mut rows = Arc::clone(&conn).run(&client.prefixed(sql), params).map_err(fail)?;
    let mut count = 0i64;
    while let Some(b) = rows.next_batch().map_err(fail)? {
        if b.num_columns() == 1 && b.schema().field(0).name() == "Count" {
            if let Some(a) = b.column(0).as_any().downcast_ref::<arrow_array::Int64Array>() {
                count += a.iter().flatten().sum::<i64>();
            }
        }
    }
    Ok(count)
}

/// Takes the parked result of ticket `id` for `client`: single use, and only its own session's.
fn take(door: &Door, client: &Client, id: &Id) -> Result<Parked, Status> {
    if let Some((_, p)) = door.tickets.parked.remove_if(id, |_, p| p.client.session.id == client.session.id) {
        return Ok(p);
    }
    if door.tickets.parked.contains_key(id) {
        return Err(Status::permission_denied("acl: the ticket belongs to another session"));
    }
    Err(Status::not_found("acl: no such ticket (a ticket is fetched once, within acl_flight_stream_idle)"))
}

pub(super) type FlightStream = Pin<Box<dyn Stream<Item = Result<arrow_flight::FlightData, Status>> + Send + 'static>>;

/// DoGet of a statement's ticket: the result, streamed.
pub(super) fn stream(door: &Arc<Door>, client: &Arc<Client>, id: &Id) -> Result<FlightStream, Status> {
    let parked = take(door, client, id)?;
    let schema = parked.rows.lock().schema();
    let idle = door.stream_idle();
    let node_cap = door.with_limits(|l| l.max_result_rows()).flatten();
    let caps = RowCaps { node: node_cap, group: client.session.max_result_rows, bytes: client.session.max_stream_bytes };
    let (tx, rx) = tokio::sync::mpsc::channel::<(RecordBatch, Held)>(2);
    let failed: Arc<Mutex<Option<Status>>> = Arc::new(Mutex::new(None));
    let rt = tokio::runtime::Handle::current();
    door.tickets.streaming.insert(*id, Arc::clone(&parked.conn));
    let (door2, failed2, id2) = (Arc::clone(door), Arc::clone(&failed), *id);
    tokio::task::spawn_blocking(move || {
        let conn = Arc::clone(&parked.conn);
        let outcome = produce(&rt, &door2, parked, &tx, idle, caps);
        if let Err(s) = outcome {
            conn.interrupt();
            *failed2.lock() = Some(s);
        }
        door2.tickets.streaming.remove(&id2);
        drop(tx);
    });
    let batches = futures::stream::unfold((rx, failed, false), |(mut rx, failed, done)| async move {
        if done {
            return None;
        }
        match rx.recv().await {
            Some((batch, held)) => {
                drop(held);
                Some((Ok(batch), (rx, failed, false)))
            }
            None => {
                let s = failed.lock().take();
                s.map(|s| (Err(FlightError::Tonic(Box::new(s))), (rx, failed, true)))
            }
        }
    });
    let encoded = FlightDataEncoderBuilder::new().with_schema(schema).build(batches).map(|r| r.map_err(Status::from));
    Ok(Box::pin(encoded))
}

#[derive(Clone, Copy)]
struct RowCaps {
    node: Option<u64>,
    group: Option<u64>,
    bytes: Option<u64>,
}

/// Fetches and hands over every batch of `parked`; the failure that ended it early, if any.
fn produce(
    rt: &tokio::runtime::Handle,
    door: &Door,
    mut parked: Parked,
    tx: &tokio::sync::mpsc::Sender<(RecordBatch, Held)>,
    idle: Duration,
    caps: RowCaps,
) -> Result<(), Status> {
    let (mut rows, mut bytes) = (0u64, 0u64);
    let client = Arc::clone(&parked.client);
    let fail = |s: Status| {
        auth::after(door, &client, &s);
        s
    };
    loop {
        if door.stopping.load(std::sync::atomic::Ordering::Acquire) {
            return Err(Status::unavailable("acl: the Flight SQL door is stopping"));
        }
        let Some(batch) = parked.rows.get_mut().next_batch().map_err(|e| fail(node_status(e)))? else { return Ok(()) };
        rows += batch.num_rows() as u64;
        for (cap, limit) in [(caps.node, "acl_max_result_rows"), (caps.group, "the resource group's max_result_rows")] {
            if let Some(max) = cap.filter(|&m| rows > m) {
                return Err(status_of(&AclError::from(DoorProblem::TooManyRows { max, limit })));
            }
        }
        let size = batch.get_array_memory_size() as u64;
        bytes += size;
        if let Some(max) = caps.bytes.filter(|&m| bytes > m) {
            return Err(status_of(&AclError::from(DoorProblem::TooManyBytes { max })));
        }
        let Some(held) = rt.block_on(door.budget.take(size, idle)) else {
            return Err(Status::resource_exhausted(AclError::from(DoorProblem::Budget { budget: door.budget.limit(), secs: idle.as_secs() }).to_string()));
        };
        match rt.block_on(tokio::time::timeout(idle, tx.send((batch, held)))) {
            Ok(Ok(())) => {}
            // the client went away (or cancelled): stop the query
            Ok(Err(_)) => return Err(Status::cancelled("acl: the client closed the stream")),
            Err(_) => return Err(Status::deadline_exceeded(AclError::from(DoorProblem::StreamIdle { secs: idle.as_secs() }).to_string())),
        }
    }
}

/// Drops tickets nobody fetched within `acl_flight_stream_idle` and forgets clients whose
/// sessions ended; runs while the door serves.
pub(super) async fn reap(door: Arc<Door>) {
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if door.stopping.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        let idle = door.stream_idle();
        let old: Vec<Id> = door.tickets.parked.iter().filter(|e| e.value().at.elapsed() > idle).map(|e| *e.key()).collect();
        for id in old {
            if let Some((_, p)) = door.tickets.parked.remove(&id) {
                p.conn.interrupt();
                // dropping a result and a connection is blocking work
                tokio::task::spawn_blocking(move || drop(p));
            }
        }
        if let Some(state) = door.state.upgrade() {
            door.clients.prune(&state);
        }
    }
}
