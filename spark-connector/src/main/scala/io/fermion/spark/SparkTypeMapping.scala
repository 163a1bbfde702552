package io.fermion.spark

import io.fermion.core.schema.{FermionField, FermionSchema, FermionType, UnsupportedColumnTypeException}
import org.apache.spark.sql.types._

/** Spark SQL types <-> Fermion types. Every Spark type without a Fermion counterpart is rejected
  * here, at planning time, with the column's name. */
object SparkTypeMapping {
  def toFermion(schema: StructType): FermionSchema = {
    var nextId = 0
    def node(name: String, path: String, t: DataType, nullable: Boolean): FermionField = {
      val id = nextId
      nextId += 1
      t match {
        case s: StructType =>
          FermionField(
            name,
            id,
            FermionType.Struct,
            nullable,
            s.fields.toIndexedSeq.map(f => node(f.name, s"$path.${f.name}", f.dataType, f.nullable))
          )
        case a: ArrayType =>
          FermionField(
            name,
            id,
            FermionType.List,
            nullable,
            IndexedSeq(node("element", s"$path.element", a.elementType, a.containsNull))
          )
        case m: MapType =>
          val key = node("key", s"$path.key", m.keyType, nullable = false)
          FermionField(
            name,
            id,
            FermionType.Map,
            nullable,
            IndexedSeq(key, node("value", s"$path.value", m.valueType, m.valueContainsNull))
          )
        case leaf => FermionField(name, id, leafType(path, leaf), nullable)
      }
    }
    FermionSchema(schema.fields.toIndexedSeq.map(f => node(f.name, f.name, f.dataType, f.nullable)))
  }

  /** The Fermion field of one Spark column (field ids from 0; used to match a read request). */
  def toFermionField(f: StructField): FermionField = toFermion(StructType(Seq(f))).fields.head

  private def leafType(column: String, t: DataType): FermionType = t match {
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
    case s: StringType =>
      throw new UnsupportedColumnTypeException(column, s.sql, "only the default UTF8_BINARY collation is supported")
    case other => throw new UnsupportedColumnTypeException(column, other.sql)
  }

  def toSpark(f: FermionField): DataType = f.dataType match {
    case FermionType.Struct => StructType(f.children.map(c => StructField(c.name, toSpark(c), c.nullable)))
    case FermionType.List => ArrayType(toSpark(f.children(0)), f.children(0).nullable)
    case FermionType.Map => MapType(toSpark(f.children(0)), toSpark(f.children(1)), f.children(1).nullable)
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
  }

  def toSpark(schema: FermionSchema): StructType =
    StructType(schema.fields.map(f => StructField(f.name, toSpark(f), f.nullable)))

  /** Checks a whole schema up front (CREATE TABLE, writes) so the error names the first bad column. */
  def validate(schema: StructType): Unit = { toFermion(schema); () }
}
