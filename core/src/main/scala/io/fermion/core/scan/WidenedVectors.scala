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
  * Structs, lists and maps keep their validity and offsets; only the nodes whose type changed are
  * copied, the others move over as they are. */
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

  /** The Arrow field of `f` (a vector's) with the types of `wanted` where they differ. */
  private def target(f: Field, stored: FermionField, wanted: FermionField): Field = {
    def kids(fs: Seq[Field], pairs: Seq[(Field, Option[(FermionField, FermionField)])]) =
      pairs.map { case (c, p) => p.map { case (s, w) => target(c, s, w) }.getOrElse(c) }.asJava
    stored.dataType match {
      case FermionType.Struct | FermionType.List =>
        val cs = f.getChildren.asScala.toSeq
        new Field(f.getName, f.getFieldType, kids(cs, cs.zip(stored.children).map { case (c, s) => c -> matched(s, stored, wanted) }))
      case FermionType.Map =>
        val entries = f.getChildren.get(0)
        val kv = entries.getChildren.asScala.toSeq
        val e = new Field(entries.getName, entries.getFieldType, kids(kv, kv.zip(stored.children).map { case (c, s) =>
          c -> matched(s, stored, wanted)
        }))
        new Field(f.getName, f.getFieldType, java.util.List.of(e))
      case _ =>
        val t = ArrowSchemaMapping.toArrowField(wanted.copy(name = f.getName)).getType
        new Field(f.getName, new FieldType(f.isNullable, t, f.getFieldType.getDictionary, f.getMetadata), null)
    }
  }

  /** The pair of `child` (of `stored`) and what `wanted` makes of it, when it changes. */
  private def matched(
      child: FermionField,
      stored: FermionField,
      wanted: FermionField
  ): Option[(FermionField, FermionField)] =
    TypeWidening.children(stored, wanted).find(_._1 eq child).filter { case (s, w) => TypeWidening.differs(s, w) }

  private def convert(v: FieldVector, stored: FermionField, wanted: FermionField, a: BufferAllocator): FieldVector = {
    val n = v.getValueCount
    val out = target(v.getField, stored, wanted).createVector(a)
    try {
      out.setInitialCapacity(n)
      out.allocateNew()
      stored.dataType match {
        case FermionType.Struct =>
          val (src, dst) = (v.asInstanceOf[StructVector], out.asInstanceOf[StructVector])
          while (dst.getValueCapacity < n) dst.reAlloc()
          dst.getValidityBuffer.setBytes(0, src.getValidityBuffer, 0, (n + 7) / 8)
          stored.children.indices.foreach { i =>
            moveChild(src.getChildByOrdinal(i).asInstanceOf[FieldVector], dst.getChildByOrdinal(i).asInstanceOf[FieldVector], stored.children(i), stored, wanted, a)
          }
          dst.setValueCount(n)
        case FermionType.List | FermionType.Map =>
          val (src, dst) = (v.asInstanceOf[ListVector], out.asInstanceOf[ListVector])
          while (dst.getValueCapacity < n) dst.reAlloc()
          dst.getValidityBuffer.setBytes(0, src.getValidityBuffer, 0, (n + 7) / 8)
          dst.getOffsetBuffer.setBytes(0, src.getOffsetBuffer, 0, (n + 1).toLong * org.apache.arrow.vector.complex.BaseRepeatedValueVector.OFFSET_WIDTH)
          if (stored.dataType == FermionType.List)
            moveChild(src.getDataVector, dst.getDataVector, stored.children.head, stored, wanted, a)
          else {
            // A map's entries: a struct of key and value.
            val (se, de) = (src.getDataVector.asInstanceOf[StructVector], dst.getDataVector.asInstanceOf[StructVector])
            val m = se.getValueCount
            de.setInitialCapacity(m); de.allocateNew()
            while (de.getValueCapacity < m) de.reAlloc()
            de.getValidityBuffer.setBytes(0, se.getValidityBuffer, 0, (m + 7) / 8)
            stored.children.indices.foreach { i =>
              moveChild(se.getChildByOrdinal(i).asInstanceOf[FieldVector], de.getChildByOrdinal(i).asInstanceOf[FieldVector], stored.children(i), stored, wanted, a)
            }
            de.setValueCount(m)
          }
          dst.setLastSet(n - 1)
          dst.setValueCount(n)
        case _ => leaves(v, out, stored.dataType, wanted.dataType, n)
      }
      out
    } catch { case t: Throwable => out.close(); throw t }
  }

  /** Child `child` of `stored` from `src` into `dst`: converted when its type changes, else moved. */
  private def moveChild(
      src: FieldVector,
      dst: FieldVector,
      child: FermionField,
      stored: FermionField,
      wanted: FermionField,
      a: BufferAllocator
  ): Unit = matched(child, stored, wanted) match {
    case Some((s, w)) =>
      val converted = convert(src, s, w, a)
      try converted.makeTransferPair(dst).transfer()
      finally converted.close()
    case None => src.makeTransferPair(dst).transfer()
  }

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
