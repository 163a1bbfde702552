package io.fermion.core.scan

import scala.jdk.CollectionConverters._

import io.fermion.core.schema.{ArrowSchemaMapping, FermionField, FermionType, TypeWidening}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.complex.{ListVector, StructVector}
import org.apache.arrow.vector.types.pojo.{Field, FieldType}

/** Values of a file written before a column's type was widened ([[TypeWidening]]), converted to
  * the dataset's type as they are read: integers to the wider integer, floats to doubles, decimals
  * rescaled, dates to the microsecond of their midnight (as Spark casts a date to timestamp_ntz).
  * Struct fields added since the file was written (a `mergeSchema` append) read null. Structs,
  * lists and maps keep their validity and offsets; only the nodes whose type changed are copied,
  * the others move over as they are. */
private[core] object WidenedVectors {

  /** `v`, decoded as the file's `stored` node, with the types of `wanted`: `v` itself when no type
    * differs, else a new vector (and `v` is closed). */
  def widen(v: FieldVector, stored: FermionField, wanted: FermionField, allocator: BufferAllocator): FieldVector =
    if (!TypeWidening.differs(stored, wanted)) v
    else
      try convert(v, stored, wanted, allocator)
      finally v.close()

  /** A new vector of flat column `v`'s values (stored as `from`) as `to`; `v` stays as it is. */
  def flatCopy(v: FieldVector, from: FermionType, to: FermionType, allocator: BufferAllocator): FieldVector = {
    val f = v.getField
    val t = ArrowSchemaMapping.toArrowField(FermionField(f.getName, -1, to, f.isNullable)).getType
    val out = new Field(f.getName, new FieldType(f.isNullable, t, null), null).createVector(allocator)
    try {
      out.setInitialCapacity(v.getValueCount); out.allocateNew()
      leaves(v, out, from, to, v.getValueCount)
      out
    } catch { case e: Throwable => out.close(); throw e }
  }

  /** The Arrow field of `f` (a vector's, decoded as `stored`) read as `wanted`: the wanted types,
    * and a struct's fields in `wanted`'s order (fields the file lacks added, others dropped). */
  private def target(f: Field, stored: FermionField, wanted: FermionField): Field = {
    val cs = f.getChildren.asScala.toIndexedSeq
    stored.dataType match {
      case FermionType.Struct =>
        val kids = wanted.children.map { w =>
          val i = stored.children.indexWhere(_.name.equalsIgnoreCase(w.name))
          if (i >= 0) target(cs(i), stored.children(i), w) else ArrowSchemaMapping.toArrowField(w.copy(nullable = true))
        }
        new Field(f.getName, f.getFieldType, kids.asJava)
      case FermionType.List =>
        new Field(f.getName, f.getFieldType, java.util.List.of(target(cs(0), stored.children(0), wanted.children(0))))
      case FermionType.Map =>
        val kv = cs(0).getChildren.asScala.toIndexedSeq
        val entries = new Field(
          cs(0).getName,
          cs(0).getFieldType,
          kv.indices.map(k => target(kv(k), stored.children(k), wanted.children(k))).asJava
        )
        new Field(f.getName, f.getFieldType, java.util.List.of(entries))
      case _ =>
        val t = ArrowSchemaMapping.toArrowField(wanted.copy(name = f.getName)).getType
        new Field(f.getName, new FieldType(f.isNullable, t, f.getFieldType.getDictionary, f.getMetadata), null)
    }
  }

  private def convert(v: FieldVector, stored: FermionField, wanted: FermionField, a: BufferAllocator): FieldVector = {
    val n = v.getValueCount
    val out = target(v.getField, stored, wanted).createVector(a)
    try {
      out.setInitialCapacity(n)
      out.allocateNew()
      stored.dataType match {
        case FermionType.Struct =>
          structInto(v.asInstanceOf[StructVector], out.asInstanceOf[StructVector], stored, wanted, a, byName = true)
        case FermionType.List | FermionType.Map =>
          val (src, dst) = (v.asInstanceOf[ListVector], out.asInstanceOf[ListVector])
          while (dst.getValueCapacity < n) dst.reAlloc()
          dst.getValidityBuffer.setBytes(0, src.getValidityBuffer, 0, (n + 7) / 8)
          dst.getOffsetBuffer.setBytes(
            0,
            src.getOffsetBuffer,
            0,
            (n + 1).toLong * org.apache.arrow.vector.complex.BaseRepeatedValueVector.OFFSET_WIDTH
          )
          if (stored.dataType == FermionType.List)
            move(src.getDataVector, dst.getDataVector, stored.children.head, wanted.children.head, a)
          else {
            // A map's entries: a struct of key and value, matched by position.
            val (se, de) = (src.getDataVector.asInstanceOf[StructVector], dst.getDataVector.asInstanceOf[StructVector])
            de.setInitialCapacity(se.getValueCount); de.allocateNew()
            structInto(se, de, stored, wanted, a, byName = false)
          }
          dst.setLastSet(n - 1)
          dst.setValueCount(n)
        case _ => leaves(v, out, stored.dataType, wanted.dataType, n)
      }
      out
    } catch { case t: Throwable => out.close(); throw t }
  }

  /** Struct `src` (fields of `stored`) into `dst` (fields of `wanted`): the validity copied, each
    * wanted field moved or converted from the stored one (by name, or by position), or all null. */
  private def structInto(
      src: StructVector,
      dst: StructVector,
      stored: FermionField,
      wanted: FermionField,
      a: BufferAllocator,
      byName: Boolean
  ): Unit = {
    val n = src.getValueCount
    while (dst.getValueCapacity < n) dst.reAlloc()
    dst.getValidityBuffer.setBytes(0, src.getValidityBuffer, 0, (n + 7) / 8)
    wanted.children.indices.foreach { j =>
      val w = wanted.children(j)
      val i = if (byName) stored.children.indexWhere(_.name.equalsIgnoreCase(w.name)) else j
      val into = dst.getChildByOrdinal(j).asInstanceOf[FieldVector]
      if (i >= 0) move(src.getChildByOrdinal(i).asInstanceOf[FieldVector], into, stored.children(i), w, a)
      else { // a field added since the file was written: null in every row
        into.setInitialCapacity(n); into.allocateNew(); into.setValueCount(n)
      }
    }
    dst.setValueCount(n)
  }

  /** `src` (decoded as `stored`) into `dst` (of `wanted`'s types): converted where they differ,
    * else its buffers moved over. */
  private def move(
      src: FieldVector,
      dst: FieldVector,
      stored: FermionField,
      wanted: FermionField,
      a: BufferAllocator
  ): Unit =
    if (TypeWidening.differs(stored, wanted)) {
      val converted = convert(src, stored, wanted, a)
      try converted.makeTransferPair(dst).transfer()
      finally converted.close()
    } else src.makeTransferPair(dst).transfer()

  private val MicrosPerDay = 86400L * 1000 * 1000

  private def leaves(v: FieldVector, out: FieldVector, from: FermionType, to: FermionType, n: Int): Unit = {
    def integer(i: Int): Long = v match {
      case x: TinyIntVector => x.get(i).toLong
      case x: SmallIntVector => x.get(i).toLong
      case x: IntVector => x.get(i).toLong
      case x: BigIntVector => x.get(i)
    }
    var i = 0
    while (i < n) {
      if (v.isNull(i)) out.asInstanceOf[BaseFixedWidthVector].setNull(i)
      else
        (from, out) match {
          case (_, o: SmallIntVector) => o.set(i, integer(i).toShort)
          case (_, o: IntVector) => o.set(i, integer(i).toInt)
          case (_, o: BigIntVector) => o.set(i, integer(i))
          case (_, o: Float8Vector) => o.set(i, v.asInstanceOf[Float4Vector].get(i).toDouble)
          case (_, o: DecimalVector) =>
            o.set(i, v.asInstanceOf[DecimalVector].getObject(i).setScale(to.asInstanceOf[FermionType.Decimal].scale))
          case (FermionType.Date32, o: TimeStampMicroVector) =>
            o.set(i, v.asInstanceOf[DateDayVector].get(i).toLong * MicrosPerDay)
          case _ => throw new IllegalStateException(s"no conversion from $from to $to")
        }
      i += 1
    }
    out.setValueCount(n)
  }
}
