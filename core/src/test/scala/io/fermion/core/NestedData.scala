package io.fermion.core

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.vector._
import org.apache.arrow.vector.complex.{ListVector, MapVector, StructVector}
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}

/** Random nested schemas (struct, list, map to a chosen depth) and random values for them, as Arrow
  * vectors. Values are plain Scala: null, leaves, Seq for struct fields and list elements,
  * Seq[(key, value)] for maps. Seeded, so failures reproduce. */
object NestedData {
  private def f(name: String, nullable: Boolean, t: ArrowType, children: Seq[Field] = Nil): Field =
    new Field(name, new FieldType(nullable, t, null), children.asJava)

  private val leaves: Seq[ArrowType] = Seq(
    new ArrowType.Int(64, true),
    new ArrowType.Int(32, true),
    ArrowType.Utf8.INSTANCE,
    new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE),
    ArrowType.Bool.INSTANCE,
    new ArrowType.Decimal(20, 3, 128)
  )

  def randomField(rnd: Random, name: String, depth: Int, nullable: Boolean = true): Field =
    if (depth <= 0) f(name, nullable, leaves(rnd.nextInt(leaves.size)))
    else rnd.nextInt(3) match {
      case 0 => f(
          name,
          nullable,
          ArrowType.Struct.INSTANCE,
          (0 until 1 + rnd.nextInt(3)).map(i => randomField(rnd, s"f$i", if (i == 0) depth - 1 else rnd.nextInt(depth)))
        )
      case 1 => f(name, nullable, ArrowType.List.INSTANCE, Seq(randomField(rnd, "element", depth - 1)))
      case _ =>
        val entries = f(
          "entries",
          nullable = false,
          ArrowType.Struct.INSTANCE,
          Seq(f("key", nullable = false, ArrowType.Utf8.INSTANCE), randomField(rnd, "value", depth - 1))
        )
        f(name, nullable, new ArrowType.Map(false), Seq(entries))
    }

  def randomValue(rnd: Random, field: Field, nullRate: Double): Any =
    if (field.isNullable && rnd.nextDouble() < nullRate) null
    else field.getType match {
      case _: ArrowType.Struct => field.getChildren.asScala.map(c => randomValue(rnd, c, nullRate)).toSeq
      case _: ArrowType.List => Seq.fill(rnd.nextInt(4))(randomValue(rnd, field.getChildren.get(0), nullRate))
      case _: ArrowType.Map =>
        val kv = field.getChildren.get(0).getChildren
        Seq.fill(rnd.nextInt(3))((s"k${rnd.nextInt(100)}", randomValue(rnd, kv.get(1), nullRate)))
      case i: ArrowType.Int => if (i.getBitWidth == 64) rnd.nextLong() else rnd.nextInt()
      case _: ArrowType.Utf8 => rnd.alphanumeric.take(rnd.nextInt(12)).mkString
      case _: ArrowType.FloatingPoint => rnd.nextGaussian()
      case _: ArrowType.Bool => rnd.nextBoolean()
      case _: ArrowType.Decimal => java.math.BigDecimal.valueOf(rnd.nextLong() % 100000000000L, 3)
    }

  /** Fills `v` (already created from its field) with `values`. */
  def fill(v: FieldVector, values: IndexedSeq[Any]): Unit = fillWith(fillLeaf)(v, values)

  /** Fills `v` with `values`: structs, maps and lists here, flat vectors by `leaf` (which leaves
    * the value count to this). */
  def fillWith(leaf: (FieldVector, IndexedSeq[Any]) => Unit)(v: FieldVector, values: IndexedSeq[Any]): Unit = {
    val n = values.size
    def fill(c: FieldVector, vs: IndexedSeq[Any]): Unit = fillWith(leaf)(c, vs)
    v match {
      case s: StructVector =>
        s.setInitialCapacity(n); s.allocateNew()
        values.indices.foreach(i => if (values(i) == null) s.setNull(i) else s.setIndexDefined(i))
        s.getChildrenFromFields.asScala.zipWithIndex.foreach { case (c, k) =>
          fill(c, values.map(x => if (x == null) null else x.asInstanceOf[Seq[Any]](k)))
        }
      case m: MapVector =>
        m.setInitialCapacity(n); m.allocateNew()
        val entries = m.getDataVector.asInstanceOf[StructVector]
        val flat = values.flatMap(x => if (x == null) Nil else x.asInstanceOf[Seq[(Any, Any)]])
        values.indices.foreach { i =>
          if (values(i) == null) m.setNull(i)
          else { m.startNewValue(i); m.endValue(i, values(i).asInstanceOf[Seq[Any]].size) }
        }
        entries.setInitialCapacity(flat.size); entries.allocateNew()
        flat.indices.foreach(entries.setIndexDefined)
        fill(entries.getChildByOrdinal(0).asInstanceOf[FieldVector], flat.map(_._1))
        fill(entries.getChildByOrdinal(1).asInstanceOf[FieldVector], flat.map(_._2))
        entries.setValueCount(flat.size)
      case l: ListVector =>
        l.setInitialCapacity(n); l.allocateNew()
        val flat = values.flatMap(x => if (x == null) Nil else x.asInstanceOf[Seq[Any]])
        values.indices.foreach { i =>
          if (values(i) == null) l.setNull(i)
          else { l.startNewValue(i); l.endValue(i, values(i).asInstanceOf[Seq[Any]].size) }
        }
        fill(l.getDataVector, flat)
      case _ => leaf(v, values)
    }
    v.setValueCount(n)
  }

  private def fillLeaf(v: FieldVector, values: IndexedSeq[Any]): Unit = {
    val n = values.size
    v match {
      case b: BigIntVector =>
        b.allocateNew(n);
        values.indices.foreach(i => if (values(i) == null) b.setNull(i) else b.set(i, values(i).asInstanceOf[Long]))
      case b: IntVector =>
        b.allocateNew(n);
        values.indices.foreach(i => if (values(i) == null) b.setNull(i) else b.set(i, values(i).asInstanceOf[Int]))
      case b: Float4Vector =>
        b.allocateNew(n);
        values.indices.foreach(i => if (values(i) == null) b.setNull(i) else b.set(i, values(i).asInstanceOf[Float]))
      case b: Float8Vector =>
        b.allocateNew(n);
        values.indices.foreach(i => if (values(i) == null) b.setNull(i) else b.set(i, values(i).asInstanceOf[Double]))
      case b: BitVector =>
        b.allocateNew(n);
        values.indices.foreach(i =>
          if (values(i) == null) b.setNull(i) else b.set(i, if (values(i).asInstanceOf[Boolean]) 1 else 0)
        )
      case b: DecimalVector =>
        b.allocateNew(n);
        values.indices.foreach(i =>
          if (values(i) == null) b.setNull(i) else b.set(i, values(i).asInstanceOf[java.math.BigDecimal])
        )
      case b: VarCharVector =>
        b.allocateNew(n);
        values.indices.foreach(i =>
          if (values(i) == null) b.setNull(i) else b.setSafe(i, values(i).asInstanceOf[String].getBytes("UTF-8"))
        )
    }
  }

  def root(fields: Seq[Field], rows: IndexedSeq[IndexedSeq[Any]]): VectorSchemaRoot = {
    val r = VectorSchemaRoot.create(new Schema(fields.asJava), TestFiles.allocator)
    fields.indices.foreach(c => fill(r.getVector(c), rows.map(_(c))))
    r.setRowCount(rows.size)
    r
  }
}
