package io.fermion.core.schema

import org.apache.arrow.vector.types.{DateUnit, FloatingPointPrecision, TimeUnit}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}

import scala.jdk.CollectionConverters._

/** Converts between Arrow schemas (what the writer is given and the reader produces) and Fermion
  * schemas. Types without a Fermion counterpart are rejected with the column's dotted path. */
object ArrowSchemaMapping {
  /** Instants are handed out in UTC; the session time zone only matters for display. */
  val UtcZone = "UTC"

  def toFermion(schema: Schema): FermionSchema = {
    var nextId = 0
    def convert(f: Field, path: String): FermionField = {
      val id = nextId
      nextId += 1
      val t = f.getType match {
        case _: ArrowType.Bool => FermionType.Bool
        case i: ArrowType.Int if i.getIsSigned => i.getBitWidth match {
            case 8 => FermionType.Int8
            case 16 => FermionType.Int16
            case 32 => FermionType.Int32
            case 64 => FermionType.Int64
          }
        case fp: ArrowType.FloatingPoint if fp.getPrecision == FloatingPointPrecision.SINGLE => FermionType.Float32
        case fp: ArrowType.FloatingPoint if fp.getPrecision == FloatingPointPrecision.DOUBLE => FermionType.Float64
        case _: ArrowType.Utf8 | _: ArrowType.LargeUtf8 => FermionType.Utf8
        case _: ArrowType.Binary | _: ArrowType.LargeBinary => FermionType.Binary
        case d: ArrowType.Date if d.getUnit == DateUnit.DAY => FermionType.Date32
        case ts: ArrowType.Timestamp if ts.getUnit == TimeUnit.MICROSECOND => FermionType.Timestamp(ts.getTimezone != null)
        case d: ArrowType.Decimal if d.getBitWidth == 128 => FermionType.Decimal(d.getPrecision, d.getScale)
        case other => throw new UnsupportedColumnTypeException(path, other.toString)
      }
      FermionField(f.getName, id, t, f.isNullable)
    }
    FermionSchema(schema.getFields.asScala.map(f => convert(f, f.getName)).toIndexedSeq)
  }

  def toArrowField(f: FermionField): Field = {
    val arrowType: ArrowType = f.dataType match {
      case FermionType.Bool => ArrowType.Bool.INSTANCE
      case FermionType.Int8 => new ArrowType.Int(8, true)
      case FermionType.Int16 => new ArrowType.Int(16, true)
      case FermionType.Int32 => new ArrowType.Int(32, true)
      case FermionType.Int64 => new ArrowType.Int(64, true)
      case FermionType.Float32 => new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)
      case FermionType.Float64 => new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)
      case FermionType.Utf8 => ArrowType.Utf8.INSTANCE
      case FermionType.Binary => ArrowType.Binary.INSTANCE
      case FermionType.Date32 => new ArrowType.Date(DateUnit.DAY)
      case FermionType.Timestamp(utc) => new ArrowType.Timestamp(TimeUnit.MICROSECOND, if (utc) UtcZone else null)
      case FermionType.Decimal(p, s) => new ArrowType.Decimal(p, s, 128)
      case other => throw new UnsupportedColumnTypeException(f.name, other.toString, "nested types are not supported yet")
    }
    new Field(f.name, new FieldType(f.nullable, arrowType, null), java.util.Collections.emptyList[Field]())
  }

  def toArrow(schema: FermionSchema): Schema = new Schema(schema.fields.map(toArrowField).asJava)
}
