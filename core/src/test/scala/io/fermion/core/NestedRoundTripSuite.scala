package io.fermion.core

import scala.jdk.CollectionConverters._
import scala.util.Random

import io.fermion.core.read.ProjectedNode
import io.fermion.core.schema.ArrowSchemaMapping
import io.fermion.core.write.WriterOptions
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}
import org.scalatest.funsuite.AnyFunSuite

/** Struct, list and map columns nested in random combinations, written and read back through the
  * VALIDITY / OFFSETS / DATA streams: identical values, whatever the depth, stripes and pages. */
class NestedRoundTripSuite extends AnyFunSuite {
  import TestFiles._

  private def roundTrip(
      fields: Seq[Field],
      rows: IndexedSeq[IndexedSeq[Any]],
      options: WriterOptions,
      clue: String
  ): Unit = {
    val file = tempDir("fermion-nested").resolve("n.fermion")
    val root = NestedData.root(fields, rows)
    try {
      write(file, root, options)
      val expected = fields.indices.map(c => column(root.getVector(c)))
      val actual = readAll(file)
      fields.indices.foreach { c =>
        assert(actual(c).size == rows.size)
        rows.indices.foreach(i => assert(actual(c)(i) == expected(c)(i), s"$clue: column ${fields(c)} row $i"))
      }
    } finally root.close()
  }

  test("random nested schemas round-trip (property, 60 seeds)") {
    for (seed <- 1 to 60) {
      val rnd = new Random(seed)
      val fields = (0 until 1 + rnd.nextInt(3)).map(i => NestedData.randomField(rnd, s"c$i", 1 + rnd.nextInt(4)))
      val nullRate = Seq(0.0, 0.2, 0.6)(seed % 3)
      val rows =
        IndexedSeq.fill(50 + rnd.nextInt(400))(fields.map(f => NestedData.randomValue(rnd, f, nullRate)).toIndexedSeq)
      roundTrip(fields, rows, WriterOptions(stripeMaxRows = 1 + rnd.nextInt(200), pageSize = 1024), s"seed $seed")
    }
  }

  test("depth 10 and more") {
    for (seed <- 100 to 105) {
      val rnd = new Random(seed)
      val field = NestedData.randomField(rnd, "deep", 10 + rnd.nextInt(3))
      val rows = IndexedSeq.fill(200)(IndexedSeq(NestedData.randomValue(rnd, field, 0.15)))
      roundTrip(Seq(field), rows, WriterOptions(stripeMaxRows = 64, pageSize = 1024), s"seed $seed")
    }
  }

  private def f(name: String, nullable: Boolean, t: ArrowType, children: Field*): Field =
    new Field(name, new FieldType(nullable, t, null), children.asJava)
  private val i64 = new ArrowType.Int(64, true)
  private val str = ArrowType.Utf8.INSTANCE

  test(
    "edge cases: null struct, list of nulls, null list, empty lists, map with null values, empty containers deep down"
  ) {
    val listOfLists =
      f("ll", true, ArrowType.List.INSTANCE, f("element", true, ArrowType.List.INSTANCE, f("element", true, i64)))
    val struct = f("s", true, ArrowType.Struct.INSTANCE, f("a", true, i64), f("b", true, str))
    val map = f(
      "m",
      true,
      new ArrowType.Map(false),
      f("entries", false, ArrowType.Struct.INSTANCE, f("key", false, str), f("value", true, i64))
    )
    val rows = IndexedSeq(
      IndexedSeq(Seq(Seq(1L, 2L), null, Seq()), Seq(1L, "x"), Seq("a" -> 1L, "b" -> null)),
      IndexedSeq(null, null, null),
      IndexedSeq(Seq(), Seq(null, null), Seq()),
      IndexedSeq(Seq(null, Seq(null)), Seq(null, "y"), Seq("only" -> null)),
      IndexedSeq(Seq(Seq(), Seq(), Seq()), Seq(3L, null), null)
    )
    roundTrip(Seq(listOfLists, struct, map), rows, WriterOptions(), "edge")
    roundTrip(
      Seq(listOfLists, struct, map),
      (0 until 300).flatMap(_ => rows),
      WriterOptions(stripeMaxRows = 7, pageSize = 1024),
      "edge, many stripes"
    )
  }

  test("list values spanning many pages and stripes") {
    val field = f("big", true, ArrowType.List.INSTANCE, f("element", true, i64))
    val rnd = new Random(5)
    val rows = IndexedSeq.fill(40)(IndexedSeq(Seq.fill(5000)(rnd.nextLong())))
    roundTrip(Seq(field), rows, WriterOptions(stripeMaxRows = 9, pageSize = 4096), "big lists")
  }

  test("selecting a.b.c reads only the streams on that path") {
    val c = f("c", true, i64)
    val b = f("b", true, ArrowType.Struct.INSTANCE, c, f("other", true, str))
    val a = f(
      "a",
      true,
      ArrowType.Struct.INSTANCE,
      f("x", true, str),
      b,
      f("y", true, ArrowType.List.INSTANCE, f("element", true, i64))
    )
    val rnd = new Random(3)
    val rows = IndexedSeq.fill(3000)(IndexedSeq(NestedData.randomValue(rnd, a, 0.1)))
    val file = tempDir("fermion-prune").resolve("p.fermion")
    val root = NestedData.root(Seq(a), rows)
    val full =
      try { write(file, root, WriterOptions()); column(root.getVector(0)) }
      finally root.close()
    // Small tail prefetch and no coalescing gap: every byte read is accounted for by the projection.
    val r = open(file, read.ReaderOptions(tailPrefetchBytes = 4096, coalesceGapBytes = 0))
    try {
      val fileField = r.schema.fields(0)
      val wanted = ArrowSchemaMapping.toFermion(new org.apache.arrow.vector.types.pojo.Schema(Seq(
        f("a", true, ArrowType.Struct.INSTANCE, f("b", true, ArrowType.Struct.INSTANCE, f("c", true, i64)))
      ).asJava)).fields(0)
      val node = ProjectedNode.prune(fileField, wanted)
      // a.validity, b.validity, c.validity, c.data out of 3 + 2 + (2 + 3) + (2 + 2) + 1 streams
      assert(node.streams == IndexedSeq(0, 4, 5, 6), node.streams)
      val before = r.bytesRead
      val vs = r.readStripeProjected(0, IndexedSeq(0 -> node), allocator)
      val pruned =
        try column(vs.head)
        finally vs.foreach(_.close())
      val readBytes = r.bytesRead - before
      val m = r.columnMetadata(0).get
      val pathBytes = node.streams.map(s => m.chunkLength(s, 0)).filter(_ < 0xffffffffL).sum
      assert(readBytes <= pathBytes, s"read $readBytes bytes, the path's chunks hold $pathBytes")
      rows.indices.foreach { i =>
        def c(v: AnyRef): Any = Option(v).flatMap(_.asInstanceOf[Map[AnyRef, AnyRef]].get("b")).flatMap(Option(_))
          .flatMap(_.asInstanceOf[Map[AnyRef, AnyRef]].get("c")).orNull
        val (expectedC, actualC) = (c(full(i)), c(pruned(i)))
        assert(actualC == expectedC, s"row $i")
      }
    } finally r.close()
  }

  test("large lists (64-bit offsets) are written as lists and read back with the same values") {
    val field = f("big", true, ArrowType.LargeList.INSTANCE, f("element", true, i64))
    val root = org.apache.arrow.vector.VectorSchemaRoot.create(
      new org.apache.arrow.vector.types.pojo.Schema(Seq(field).asJava),
      allocator
    )
    val file = tempDir("fermion-largelist").resolve("l.fermion")
    val expected = IndexedSeq(IndexedSeq(1L, 2L), null, IndexedSeq(), IndexedSeq(3L, 4L, 5L))
    try {
      val l = root.getVector(0).asInstanceOf[org.apache.arrow.vector.complex.LargeListVector]
      l.allocateNew()
      val w = l.getWriter
      expected.zipWithIndex.foreach { case (v, i) =>
        w.setPosition(i)
        if (v != null) { w.startList(); v.foreach(x => w.bigInt().writeBigInt(x)); w.endList() }
      }
      l.setValueCount(expected.size)
      root.setRowCount(expected.size)
      write(file, root, WriterOptions())
    } finally root.close()
    val back = readAll(file).head
    assert(back == expected.map(v => if (v == null) null else v.map(x => java.lang.Long.valueOf(x): AnyRef)))
  }

  test("a list or map read without its elements holds each row's length, null and empty rows 0, on every encoding") {
    val list = f("l", true, ArrowType.List.INSTANCE, f("element", true, i64))
    val map = f(
      "m",
      true,
      new ArrowType.Map(false),
      f("entries", false, ArrowType.Struct.INSTANCE, f("key", false, str), f("value", true, i64))
    )
    val rnd = new Random(7)
    def lengthOf(i: Int): Int = if (i % 500 < 100) 3 else rnd.nextInt(if (i % 3 == 0) 40 else 5)
    def rows(nulls: Boolean, empty: Boolean) = IndexedSeq.tabulate(3000) { i =>
      if (nulls && i % 7 == 0) IndexedSeq(null, null)
      else {
        val n = if (empty) 0 else lengthOf(i)
        IndexedSeq(Seq.tabulate(n)(k => (i + k).toLong), Seq.tabulate(n % 4)(k => s"k$k" -> k.toLong))
      }
    }
    for {
      encoding <- io.fermion.core.layout.PageEncoding.all
      (nulls, empty) <- Seq((false, false), (true, false), (true, true), (false, true))
    } {
      val clue = s"${io.fermion.core.layout.PageEncoding.name(encoding)}, nulls $nulls, all empty $empty"
      val data = rows(nulls, empty)
      val file = tempDir("fermion-lengths").resolve("l.fermion")
      val root = NestedData.root(Seq(list, map), data)
      try write(
          file,
          root,
          WriterOptions(
            stripeMaxRows = 1200,
            pageSize = 1024,
            encodings = io.fermion.core.encoding.EncodingSet(Set(encoding))
          )
        )
      finally root.close()
      val r = open(file)
      try {
        val got = (0 until r.numStripes).flatMap { s =>
          val vs = r.readStripeProjected(
            s,
            IndexedSeq(0, 1).map(c => c -> ProjectedNode.full(r.schema.fields(c)).withoutElements),
            allocator
          )
          try {
            val Seq(l, m) = vs.map(_.asInstanceOf[org.apache.arrow.vector.IntVector])
            (0 until l.getValueCount).map(i =>
              (if (l.isNull(i)) None else Some(l.get(i)), if (m.isNull(i)) None else Some(m.get(i)))
            )
          } finally vs.foreach(_.close())
        }
        val want = data.map(row =>
          (Option(row(0)).map(_.asInstanceOf[Seq[Any]].size), Option(row(1)).map(_.asInstanceOf[Seq[Any]].size))
        )
        assert(got == want, clue)
      } finally r.close()
    }
  }
}
