//! The Flight SQL service: each RPC authenticates (`auth::client`), then runs its statements
//! through the session on the node (`query`, `catalog`). DuckDB's calls block: they run on the
//! runtime's blocking threads, never on its workers.
use super::auth::{self, node_status, Client, COOKIE};
use super::server::Door;
use super::{catalog, params, query};
use arrow_array::RecordBatch;
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::flight_service_server::FlightService;
use arrow_flight::sql::metadata::{SqlInfoData, SqlInfoDataBuilder};
use arrow_flight::sql::server::{FlightSqlService, PeekableFlightDataStream};
use arrow_flight::sql::{
    ActionBeginTransactionRequest, ActionBeginTransactionResult, ActionClosePreparedStatementRequest, ActionCreatePreparedStatementRequest,
    ActionCreatePreparedStatementResult, ActionEndTransactionRequest, Any, CommandGetCatalogs, CommandGetDbSchemas, CommandGetPrimaryKeys,
    CommandGetSqlInfo, CommandGetTableTypes, CommandGetTables, CommandPreparedStatementQuery, CommandPreparedStatementUpdate,
    CommandStatementIngest, CommandStatementQuery, CommandStatementUpdate, DoPutPreparedStatementResult, ProstMessageExt, SqlInfo, TicketStatementQuery,
};
use arrow_flight::{Action, FlightDescriptor, FlightEndpoint, FlightInfo, HandshakeRequest, HandshakeResponse, IpcMessage, SchemaAsIpc, Ticket};
use arrow_schema::{Schema, SchemaRef};
use futures::{Stream, StreamExt, TryStreamExt};
use prost::Message;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use tonic::{Request, Response, Status, Streaming};

pub(super) struct Service {
    pub door: Arc<Door>,
}

/// Runs blocking work off the runtime's workers.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T, Status> + Send + 'static) -> Result<T, Status> {
    tokio::task::spawn_blocking(f).await.map_err(|_| Status::internal("acl: internal error: a door task failed"))?
}

fn peer<T>(r: &Request<T>) -> Option<String> {
    r.remote_addr().map(|a| a.to_string())
}

/// The call's client (blocking work: the token is verified, a session may open).
async fn client_of<T>(door: &Arc<Door>, r: &Request<T>) -> Result<Arc<Client>, Status> {
    let (door, md, peer) = (Arc::clone(door), r.metadata().clone(), peer(r));
    blocking(move || auth::client(&door, &md, peer)).await
}

/// `set-cookie` for clients that keep cookies: the next call on the same client finds the session.
fn with_cookie<T>(mut r: Response<T>, c: &Client) -> Response<T> {
    if let Ok(v) = format!("{COOKIE}={}", c.cookie).parse() {
        r.metadata_mut().insert("set-cookie", v);
    }
    r
}

fn id_of(b: &[u8]) -> Result<query::Id, Status> {
    b.try_into().map_err(|_| Status::invalid_argument("acl: not a handle of this door"))
}

fn ipc(schema: &Schema) -> Result<bytes::Bytes, Status> {
    let IpcMessage(b) = SchemaAsIpc::new(schema, &Default::default()).try_into().map_err(|e: arrow_schema::ArrowError| Status::internal(e.to_string()))?;
    Ok(b)
}

fn info(schema: &Schema, ticket: Vec<u8>, descriptor: FlightDescriptor) -> Result<FlightInfo, Status> {
    Ok(FlightInfo::new()
        .try_with_schema(schema)
        .map_err(|e| Status::internal(e.to_string()))?
        .with_endpoint(FlightEndpoint::new().with_ticket(Ticket::new(ticket)))
        .with_descriptor(descriptor))
}

fn one_batch(schema: SchemaRef, batch: RecordBatch) -> query::FlightStream {
    let s = FlightDataEncoderBuilder::new().with_schema(schema).build(futures::stream::once(async { Ok(batch) })).map_err(Status::from);
    Box::pin(s)
}

fn sql_info() -> &'static SqlInfoData {
    static INFO: OnceLock<SqlInfoData> = OnceLock::new();
    INFO.get_or_init(|| {
        let mut b = SqlInfoDataBuilder::new();
        b.append(SqlInfo::FlightSqlServerName, "duckdb-acl");
        b.append(SqlInfo::FlightSqlServerVersion, env!("CARGO_PKG_VERSION"));
        b.append(SqlInfo::FlightSqlServerArrowVersion, "60.1.0");
        b.append(SqlInfo::FlightSqlServerReadOnly, false);
        b.append(SqlInfo::FlightSqlServerSql, true);
        b.append(SqlInfo::FlightSqlServerSubstrait, false);
        b.append(SqlInfo::FlightSqlServerTransaction, 1i32);
        b.append(SqlInfo::FlightSqlServerCancel, true);
        b.append(SqlInfo::SqlIdentifierQuoteChar, "\"");
        b.append(SqlInfo::SqlDdlCatalog, false);
        b.append(SqlInfo::SqlDdlSchema, false);
        b.append(SqlInfo::SqlDdlTable, true);
        // built from constants: it cannot fail
        b.build().unwrap_or_else(|_| SqlInfoDataBuilder::new().build().expect("an empty SqlInfo builds"))
    })
}

/// A client's parameter batches from a DoPut body, one execution per row.
/// A DoPut body's batches and their schema.
async fn batches(r: Request<PeekableFlightDataStream>) -> Result<(Arc<Schema>, Vec<RecordBatch>), Status> {
    let stream = r.into_inner().map_err(arrow_flight::error::FlightError::from);
    let mut decoded = arrow_flight::decode::FlightRecordBatchStream::new_from_flight_data(stream);
    let mut out = Vec::new();
    while let Some(b) = decoded.next().await {
        out.push(b.map_err(|e| Status::invalid_argument(format!("acl: the batches could not be read: {e}")))?);
    }
    let schema = decoded.schema().cloned().or_else(|| out.first().map(|b| b.schema())).unwrap_or_else(|| Arc::new(Schema::empty()));
    Ok((schema, out))
}

async fn bound(r: Request<PeekableFlightDataStream>) -> Result<Vec<Vec<super::node::Param>>, Status> {
    let stream = r.into_inner().map_err(arrow_flight::error::FlightError::from);
    let batches: Vec<RecordBatch> = arrow_flight::decode::FlightRecordBatchStream::new_from_flight_data(stream)
        .try_collect()
        .await
        .map_err(|e| Status::invalid_argument(format!("acl: the parameters could not be read: {e}")))?;
    let mut rows = Vec::new();
    for b in &batches {
        rows.extend(params::rows(b)?);
    }
    Ok(rows)
}

impl Service {
    fn prepared(&self, c: &Client, handle: &[u8]) -> Result<Arc<query::Prepared>, Status> {
        let id = id_of(handle)?;
        match self.door.tickets.prepared.get(&id) {
            Some(p) if p.session == c.session.id => Ok(Arc::clone(&p)),
            Some(_) => Err(Status::permission_denied("acl: the prepared statement belongs to another session")),
            None => Err(Status::not_found("acl: no such prepared statement")),
        }
    }

    async fn start(&self, c: Arc<Client>, sql: String, params: Vec<super::node::Param>, txn: Option<Vec<u8>>, d: FlightDescriptor) -> Result<Response<FlightInfo>, Status> {
        let door = Arc::clone(&self.door);
        let c2 = Arc::clone(&c);
        let (id, schema) = blocking(move || query::start(&door, &c2, &sql, &params, txn.as_deref())).await?;
        let ticket = TicketStatementQuery { statement_handle: id.to_vec().into() }.as_any().encode_to_vec();
        Ok(with_cookie(Response::new(info(&schema, ticket, d)?), &c))
    }

    /// A catalog RPC's FlightInfo: the command is its own ticket (it carries no state).
    fn catalog_info(&self, any: Any, schema: &Schema, d: FlightDescriptor) -> Result<Response<FlightInfo>, Status> {
        Ok(Response::new(info(schema, any.encode_to_vec(), d)?))
    }
}

type HandshakeStream = Pin<Box<dyn Stream<Item = Result<HandshakeResponse, Status>> + Send>>;

#[tonic::async_trait]
impl FlightSqlService for Service {
    type FlightService = Service;

    /// The Flight handshake: the bearer token in the call's header (or as the handshake's payload)
    /// opens the client's session; the answer hands the same bearer back, and the cookie.
    async fn do_handshake(&self, request: Request<Streaming<HandshakeRequest>>) -> Result<Response<HandshakeStream>, Status> {
        let mut md = request.metadata().clone();
        let p = peer(&request);
        if md.get("authorization").is_none() {
            let mut s = request.into_inner();
            if let Some(Ok(h)) = s.next().await {
                let token = String::from_utf8(h.payload.to_vec()).map_err(|_| Status::unauthenticated("acl: the handshake's payload is no token"))?;
                let v = format!("Bearer {}", token.trim()).parse().map_err(|_| Status::unauthenticated("acl: the handshake's payload is no token"))?;
                md.insert("authorization", v);
            }
        }
        let door = Arc::clone(&self.door);
        let md2 = md.clone();
        let c = blocking(move || auth::client(&door, &md2, p)).await?;
        let out = futures::stream::once(async { Ok(HandshakeResponse { protocol_version: 0, payload: Default::default() }) });
        let mut r = Response::new(Box::pin(out) as HandshakeStream);
        if let Some(a) = md.get("authorization") {
            r.metadata_mut().insert("authorization", a.clone());
        }
        Ok(with_cookie(r, &c))
    }

    async fn get_flight_info_statement(&self, q: CommandStatementQuery, request: Request<FlightDescriptor>) -> Result<Response<FlightInfo>, Status> {
        let c = client_of(&self.door, &request).await?;
        self.start(c, q.query, Vec::new(), q.transaction_id.map(|t| t.to_vec()), request.into_inner()).await
    }

    async fn get_flight_info_prepared_statement(&self, q: CommandPreparedStatementQuery, request: Request<FlightDescriptor>) -> Result<Response<FlightInfo>, Status> {
        let c = client_of(&self.door, &request).await?;
        let p = self.prepared(&c, &q.prepared_statement_handle)?;
        let params = {
            let bound = p.params.lock();
            if bound.len() > 1 {
                return Err(Status::invalid_argument("acl: a query takes one row of parameters"));
            }
            bound.first().cloned().unwrap_or_default()
        };
        self.start(c, p.sql.clone(), params, p.txn.clone(), request.into_inner()).await
    }

    async fn do_get_statement(&self, t: TicketStatementQuery, request: Request<Ticket>) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let c = client_of(&self.door, &request).await?;
        let id = id_of(&t.statement_handle)?;
        Ok(with_cookie(Response::new(query::stream(&self.door, &c, &id)?), &c))
    }

    async fn do_action_create_prepared_statement(&self, q: ActionCreatePreparedStatementRequest, request: Request<Action>) -> Result<ActionCreatePreparedStatementResult, Status> {
        let c = client_of(&self.door, &request).await?;
        let door = Arc::clone(&self.door);
        let (c2, sql) = (Arc::clone(&c), q.query.clone());
        let txn = q.transaction_id.as_ref().map(|t| t.to_vec());
        let txn2 = txn.clone();
        let described = blocking(move || {
            let conn = query::conn_for(&door, &c2, txn2.as_deref())?;
            let _r = door.register(Arc::clone(&conn));
            conn.describe(&c2.prefixed(&sql)).map_err(|e| {
                let s = node_status(e);
                auth::after(&door, &c2, &s);
                s
            })
        })
        .await?;
        let id = query::new_id()?;
        self.door.tickets.prepared.insert(id, Arc::new(query::Prepared { session: c.session.id, sql: q.query, txn, params: Default::default() }));
        Ok(ActionCreatePreparedStatementResult {
            prepared_statement_handle: id.to_vec().into(),
            dataset_schema: ipc(&described.columns)?,
            parameter_schema: ipc(&described.parameters)?,
        })
    }

    async fn do_action_close_prepared_statement(&self, q: ActionClosePreparedStatementRequest, request: Request<Action>) -> Result<(), Status> {
        let c = client_of(&self.door, &request).await?;
        self.prepared(&c, &q.prepared_statement_handle)?;
        self.door.tickets.prepared.remove(&id_of(&q.prepared_statement_handle)?);
        Ok(())
    }

    async fn do_put_prepared_statement_query(&self, q: CommandPreparedStatementQuery, request: Request<PeekableFlightDataStream>) -> Result<DoPutPreparedStatementResult, Status> {
        let c = client_of(&self.door, &request).await?;
        let p = self.prepared(&c, &q.prepared_statement_handle)?;
        *p.params.lock() = bound(request).await?;
        Ok(DoPutPreparedStatementResult { prepared_statement_handle: Some(q.prepared_statement_handle) })
    }

    async fn do_put_prepared_statement_update(&self, q: CommandPreparedStatementUpdate, request: Request<PeekableFlightDataStream>) -> Result<i64, Status> {
        let c = client_of(&self.door, &request).await?;
        let p = self.prepared(&c, &q.prepared_statement_handle)?;
        let mut rows = bound(request).await?;
        if rows.is_empty() {
            rows = p.params.lock().clone();
        }
        if rows.is_empty() {
            rows.push(Vec::new());
        }
        let door = Arc::clone(&self.door);
        blocking(move || rows.iter().try_fold(0i64, |n, r| Ok(n + query::execute(&door, &c, &p.sql, r, p.txn.as_deref())?))).await
    }

    async fn do_put_statement_update(&self, q: CommandStatementUpdate, request: Request<PeekableFlightDataStream>) -> Result<i64, Status> {
        let c = client_of(&self.door, &request).await?;
        let door = Arc::clone(&self.door);
        let txn = q.transaction_id.map(|t| t.to_vec());
        blocking(move || query::execute(&door, &c, &q.query, &[], txn.as_deref())).await
    }

    async fn do_put_statement_ingest(&self, q: CommandStatementIngest, request: Request<PeekableFlightDataStream>) -> Result<i64, Status> {
        let c = client_of(&self.door, &request).await?;
        let (schema, data) = batches(request).await?;
        let door = Arc::clone(&self.door);
        blocking(move || super::ingest::ingest(&door, &c, q, schema, data)).await
    }

    async fn do_action_begin_transaction(&self, _q: ActionBeginTransactionRequest, request: Request<Action>) -> Result<ActionBeginTransactionResult, Status> {
        let c = client_of(&self.door, &request).await?;
        let door = Arc::clone(&self.door);
        let id = blocking(move || {
            if c.txn.lock().is_some() {
                return Err(Status::failed_precondition("acl: the session already has an open transaction"));
            }
            let conn = door.node.connect().map_err(node_status)?;
            let id = query::new_id()?.to_vec();
            *c.txn.lock() = Some((id.clone(), conn));
            if let Err(e) = query::execute(&door, &c, "BEGIN TRANSACTION", &[], Some(&id)) {
                *c.txn.lock() = None;
                return Err(e);
            }
            Ok(id)
        })
        .await?;
        Ok(ActionBeginTransactionResult { transaction_id: id.into() })
    }

    async fn do_action_end_transaction(&self, q: ActionEndTransactionRequest, request: Request<Action>) -> Result<(), Status> {
        let c = client_of(&self.door, &request).await?;
        let door = Arc::clone(&self.door);
        blocking(move || {
            let sql = match q.action {
                1 => "COMMIT",
                2 => "ROLLBACK",
                _ => return Err(Status::invalid_argument("acl: end a transaction with commit or rollback")),
            };
            let result = query::execute(&door, &c, sql, &[], Some(&q.transaction_id));
            *c.txn.lock() = None;
            result.map(|_| ())
        })
        .await
    }

    async fn get_flight_info_catalogs(&self, q: CommandGetCatalogs, r: Request<FlightDescriptor>) -> Result<Response<FlightInfo>, Status> {
        let schema = q.clone().into_builder().schema();
        self.catalog_info(q.as_any(), &schema, r.into_inner())
    }

    async fn get_flight_info_schemas(&self, q: CommandGetDbSchemas, r: Request<FlightDescriptor>) -> Result<Response<FlightInfo>, Status> {
        let schema = q.clone().into_builder().schema();
        self.catalog_info(q.as_any(), &schema, r.into_inner())
    }

    async fn get_flight_info_tables(&self, q: CommandGetTables, r: Request<FlightDescriptor>) -> Result<Response<FlightInfo>, Status> {
        let schema = q.clone().into_builder().schema();
        self.catalog_info(q.as_any(), &schema, r.into_inner())
    }

    async fn get_flight_info_table_types(&self, q: CommandGetTableTypes, r: Request<FlightDescriptor>) -> Result<Response<FlightInfo>, Status> {
        let schema = q.clone().into_builder().schema();
        self.catalog_info(q.as_any(), &schema, r.into_inner())
    }

    async fn get_flight_info_sql_info(&self, q: CommandGetSqlInfo, r: Request<FlightDescriptor>) -> Result<Response<FlightInfo>, Status> {
        let schema = q.clone().into_builder(sql_info()).schema();
        self.catalog_info(q.as_any(), &schema, r.into_inner())
    }

    async fn get_flight_info_primary_keys(&self, q: CommandGetPrimaryKeys, r: Request<FlightDescriptor>) -> Result<Response<FlightInfo>, Status> {
        self.catalog_info(q.as_any(), &catalog::primary_keys_schema(), r.into_inner())
    }

    async fn do_get_catalogs(&self, q: CommandGetCatalogs, r: Request<Ticket>) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let c = client_of(&self.door, &r).await?;
        let door = Arc::clone(&self.door);
        let b = blocking(move || catalog::catalogs(&door, &c, q)).await?;
        Ok(Response::new(one_batch(b.schema(), b)))
    }

    async fn do_get_schemas(&self, q: CommandGetDbSchemas, r: Request<Ticket>) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let c = client_of(&self.door, &r).await?;
        let door = Arc::clone(&self.door);
        let b = blocking(move || catalog::schemas(&door, &c, q)).await?;
        Ok(Response::new(one_batch(b.schema(), b)))
    }

    async fn do_get_tables(&self, q: CommandGetTables, r: Request<Ticket>) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let c = client_of(&self.door, &r).await?;
        let door = Arc::clone(&self.door);
        let b = blocking(move || catalog::tables(&door, &c, q)).await?;
        Ok(Response::new(one_batch(b.schema(), b)))
    }

    async fn do_get_table_types(&self, q: CommandGetTableTypes, r: Request<Ticket>) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        client_of(&self.door, &r).await?;
        let mut b = q.into_builder();
        for t in catalog::TABLE_TYPES {
            b.append(t);
        }
        let batch = b.build().map_err(|e| Status::internal(e.to_string()))?;
        Ok(Response::new(one_batch(batch.schema(), batch)))
    }

    async fn do_get_sql_info(&self, q: CommandGetSqlInfo, r: Request<Ticket>) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        client_of(&self.door, &r).await?;
        let batch = q.into_builder(sql_info()).build().map_err(|e| Status::internal(e.to_string()))?;
        Ok(Response::new(one_batch(batch.schema(), batch)))
    }

    async fn do_get_primary_keys(&self, _q: CommandGetPrimaryKeys, r: Request<Ticket>) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        client_of(&self.door, &r).await?;
        let batch = catalog::primary_keys()?;
        Ok(Response::new(one_batch(batch.schema(), batch)))
    }

    /// CancelFlightInfo (the action the Flight protocol names): interrupts the statement of the
    /// FlightInfo's ticket, if it is this session's.
    async fn do_action_fallback(&self, request: Request<Action>) -> Result<Response<<Self as FlightService>::DoActionStream>, Status> {
        if request.get_ref().r#type != "CancelFlightInfo" {
            return Err(Status::unimplemented(format!("acl: the door does not take the action {}", request.get_ref().r#type)));
        }
        let c = client_of(&self.door, &request).await?;
        let req = arrow_flight::CancelFlightInfoRequest::decode(request.get_ref().body.clone()).map_err(|_| Status::invalid_argument("acl: not a CancelFlightInfoRequest"))?;
        let mut cancelled = false;
        for e in req.info.map(|i| i.endpoint).unwrap_or_default() {
            let Some(t) = e.ticket else { continue };
            let Ok(any) = Any::decode(t.ticket) else { continue };
            if let Ok(Some(q)) = any.unpack::<TicketStatementQuery>() {
                if let Ok(id) = id_of(&q.statement_handle) {
                    cancelled |= self.door.tickets.cancel(&c, &id);
                }
            }
        }
        let status = if cancelled { arrow_flight::CancelStatus::Cancelled } else { arrow_flight::CancelStatus::NotCancellable };
        let body = arrow_flight::CancelFlightInfoResult { status: status as i32 }.encode_to_vec();
        let out = futures::stream::once(async move { Ok(arrow_flight::Result { body: body.into() }) });
        Ok(Response::new(Box::pin(out)))
    }

}
