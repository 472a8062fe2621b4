//! A client's parameter batches (prepared statements, DoPut): each row is one execution's values.
//! Parameters are few; results never pass through here (they stay DuckDB's Arrow batches).
use super::node::Param;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use tonic::Status;

fn value(col: &ArrayRef, row: usize) -> Result<Param, Status> {
    if col.is_null(row) {
        return Ok(Param::Null);
    }
    Ok(match col.data_type() {
        DataType::Null => Param::Null,
        DataType::Boolean => Param::Bool(col.as_boolean().value(row)),
        DataType::Int8 => Param::Int(col.as_primitive::<Int8Type>().value(row).into()),
        DataType::Int16 => Param::Int(col.as_primitive::<Int16Type>().value(row).into()),
        DataType::Int32 => Param::Int(col.as_primitive::<Int32Type>().value(row).into()),
        DataType::Int64 => Param::Int(col.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => Param::UInt(col.as_primitive::<UInt8Type>().value(row).into()),
        DataType::UInt16 => Param::UInt(col.as_primitive::<UInt16Type>().value(row).into()),
        DataType::UInt32 => Param::UInt(col.as_primitive::<UInt32Type>().value(row).into()),
        DataType::UInt64 => Param::UInt(col.as_primitive::<UInt64Type>().value(row)),
        DataType::Float32 => Param::Float(col.as_primitive::<Float32Type>().value(row).into()),
        DataType::Float64 => Param::Float(col.as_primitive::<Float64Type>().value(row)),
        DataType::Utf8 => Param::Text(col.as_string::<i32>().value(row).to_string()),
        DataType::LargeUtf8 => Param::Text(col.as_string::<i64>().value(row).to_string()),
        DataType::Utf8View => Param::Text(col.as_string_view().value(row).to_string()),
        DataType::Binary => Param::Blob(col.as_binary::<i32>().value(row).to_vec()),
        DataType::LargeBinary => Param::Blob(col.as_binary::<i64>().value(row).to_vec()),
        DataType::Date32 => Param::Date(col.as_primitive::<Date32Type>().value(row)),
        DataType::Timestamp(unit, None) => {
            let v = match unit {
                TimeUnit::Second => col.as_primitive::<TimestampSecondType>().value(row).saturating_mul(1_000_000),
                TimeUnit::Millisecond => col.as_primitive::<TimestampMillisecondType>().value(row).saturating_mul(1000),
                TimeUnit::Microsecond => col.as_primitive::<TimestampMicrosecondType>().value(row),
                TimeUnit::Nanosecond => col.as_primitive::<TimestampNanosecondType>().value(row) / 1000,
            };
            Param::Timestamp(v)
        }
        other => return Err(Status::invalid_argument(format!("acl: a parameter of type {other} is not supported by the door; cast it in the statement"))),
    })
}

/// Each row of `batch` as one execution's parameters.
pub(super) fn rows(batch: &RecordBatch) -> Result<Vec<Vec<Param>>, Status> {
    (0..batch.num_rows()).map(|r| batch.columns().iter().map(|c| value(c, r)).collect()).collect()
}
