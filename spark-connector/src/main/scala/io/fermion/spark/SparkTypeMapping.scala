package io.fermion.spark

import io.fermion.core.schema.{FermionField, FermionSchema, FermionType, UnsupportedColumnTypeException}
import org.apache.spark.sql.types._

/** Spark SQL types <-> Fermion types. Every Spark type without a Fermion counterpart is rejected
  * here, at planning time, with the column's name. */
object SparkTypeMapping {
  def toFermion(schema: StructType): FermionSchema = {
    var nextId = 0
    FermionSchema(schema.fields.toIndexedSeq.map { f =>
      val id = nextId
      nextId += 1
      FermionField(f.name, id, toFermionType(f.name, f.dataType), f.nullable)
    })
  }

  def toFermionType(column: String, t: DataType): FermionType = t match {
    case BooleanType => FermionType.Bool
    case ByteType => FermionType.Int8
    case ShortType => FermionType.Int16
    case IntegerType => FermionType.Int32
    case LongType => FermionType.Int64
    case FloatType => FermionType.Float32
    case DoubleType => FermionType.Float64
    case s: StringType if s == StringType => FermionType.Utf8
    case _: CharType | _: VarcharType => FermionType.Utf8
    case BinaryType => FermionType.Binary
    case DateType => FermionType.Date32
    case TimestampType => FermionType.Timestamp(utcAdjusted = true)
    case TimestampNTZType => FermionType.Timestamp(utcAdjusted = false)
    case d: DecimalType => FermionType.Decimal(d.precision, d.scale)
    case _: StructType | _: ArrayType | _: MapType =>
      throw new UnsupportedColumnTypeException(column, t.sql, "nested types (struct, array, map) are not supported yet")
    case s: StringType => throw new UnsupportedColumnTypeException(column, s.sql, "only the default UTF8_BINARY collation is supported")
    case other => throw new UnsupportedColumnTypeException(column, other.sql)
  }

  def toSpark(t: FermionType): DataType = t match {
    case FermionType.Bool => BooleanType
    case FermionType.Int8 => ByteType
    case FermionType.Int16 => ShortType
    case FermionType.Int32 => IntegerType
    case FermionType.Int64 => LongType
    case FermionType.Float32 => FloatType
    case FermionType.Float64 => DoubleType
    case FermionType.Utf8 => StringType
    case FermionType.Binary => BinaryType
    case FermionType.Date32 => DateType
    case FermionType.Timestamp(true) => TimestampType
    case FermionType.Timestamp(false) => TimestampNTZType
    case FermionType.Decimal(p, s) => DecimalType(p, s)
    case other => throw new UnsupportedColumnTypeException("?", other.toString, "this connector version cannot read it")
  }

  def toSpark(schema: FermionSchema): StructType =
    StructType(schema.fields.map(f => StructField(f.name, toSpark(f.dataType), f.nullable)))

  /** Checks a whole schema up front (CREATE TABLE, writes) so the error names the first bad column. */
  def validate(schema: StructType): Unit = { toFermion(schema); () }
}
