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
      def kids = f.getChildren.asScala.map(c => convert(c, s"$path.${c.getName}")).toIndexedSeq
      f.getType match {
        case _: ArrowType.Struct => FermionField(f.getName, id, FermionType.Struct, f.isNullable, kids)
        case _: ArrowType.Map =>
          // Arrow: map<entries: struct<key, value>>; Fermion keeps key and value as the map's children.
          val entries = f.getChildren.get(0)
          val kv = entries.getChildren.asScala.map(c => convert(c, s"$path.${c.getName}")).toIndexedSeq
          if (kv.size != 2)
            throw new UnsupportedColumnTypeException(path, f.getType.toString, "a map needs a key and a value")
          FermionField(f.getName, id, FermionType.Map, f.isNullable, IndexedSeq(kv(0).copy(nullable = false), kv(1)))
        // Large lists (64-bit offsets) are stored like lists: a stripe never holds 2^31 elements.
        case _: ArrowType.List | _: ArrowType.LargeList =>
          FermionField(f.getName, id, FermionType.List, f.isNullable, kids)
        case t => FermionField(f.getName, id, leafType(t, path), f.isNullable)
      }
    }
    FermionSchema(schema.getFields.asScala.map(f => convert(f, f.getName)).toIndexedSeq)
  }

  private def leafType(t: ArrowType, path: String): FermionType = t match {
    case _: ArrowType.Bool => FermionType.Bool
    case i: ArrowType.Int if i.getIsSigned =>
      i.getBitWidth match {
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

  /** The Arrow field of a Fermion node, named as Spark's Arrow conversion names them (list
    * element "element", map "entries" with "key" and "value"). */
  def toArrowField(f: FermionField): Field = {
    def field(name: String, nullable: Boolean, t: ArrowType, children: Seq[Field]) =
      new Field(name, new FieldType(nullable, t, null), children.asJava)
    f.dataType match {
      case FermionType.Struct => field(f.name, f.nullable, ArrowType.Struct.INSTANCE, f.children.map(toArrowField))
      case FermionType.List => field(f.name, f.nullable, ArrowType.List.INSTANCE, f.children.map(toArrowField))
      case FermionType.Map =>
        val entries = field(
          "entries",
          nullable = false,
          ArrowType.Struct.INSTANCE,
          Seq(toArrowField(f.children(0).copy(nullable = false)), toArrowField(f.children(1)))
        )
        field(f.name, f.nullable, new ArrowType.Map(false), Seq(entries))
      case leaf =>
        val arrowType: ArrowType = leaf match {
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
          case other => throw new IllegalStateException(s"unexpected type $other")
        }
        field(f.name, f.nullable, arrowType, Nil)
    }
  }

  def toArrow(schema: FermionSchema): Schema = new Schema(schema.fields.map(toArrowField).asJava)
}
