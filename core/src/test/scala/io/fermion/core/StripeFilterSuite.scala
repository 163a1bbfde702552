package io.fermion.core

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.Random

import io.fermion.core.expr.{FilterExpr, FilterValue}
import io.fermion.core.read.filter.StripeFilter
import io.fermion.core.expr.FilterExpr._
import io.fermion.core.write.WriterOptions
import org.apache.arrow.vector._
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Schema}
import org.scalatest.funsuite.AnyFunSuite

/** Stripe skipping never drops a matching row (differential against evaluating every row), and
  * does skip on sorted data. */
class StripeFilterSuite extends AnyFunSuite {
  import TestFiles._

  final private case class Row(k: java.lang.Long, d: java.lang.Double, s: String)

  private def sqlCompare(op: Op, c: Int): Boolean = op match {
    case Eq => c == 0; case NotEq => c != 0; case Lt => c < 0; case LtEq => c <= 0; case Gt => c > 0;
    case GtEq => c >= 0
  }

  /** Spark's order for doubles: NaN above everything, -0.0 == 0.0. */
  private def cmpDouble(a: Double, b: Double): Int =
    if (a.isNaN && b.isNaN) 0 else if (a.isNaN) 1 else if (b.isNaN) -1 else java.lang.Double.compare(a + 0.0, b + 0.0)
  private def cmpBytes(a: Array[Byte], b: Array[Byte]): Int = java.util.Arrays.compareUnsigned(a, b)

  private def matches(e: FilterExpr, r: Row): Option[Boolean] = e match {
    case And(l, rr) => (matches(l, r), matches(rr, r)) match {
        case (Some(false), _) | (_, Some(false)) => Some(false)
        case (Some(true), Some(true)) => Some(true)
        case _ => None
      }
    case Or(l, rr) => (matches(l, r), matches(rr, r)) match {
        case (Some(true), _) | (_, Some(true)) => Some(true)
        case (Some(false), Some(false)) => Some(false)
        case _ => None
      }
    case Not(c) => matches(c, r).map(!_)
    case IsNull(c) => Some(value(r, c) == null)
    case IsNotNull(c) => Some(value(r, c) != null)
    case Compare(c, op, v) => Option(value(r, c)).map(x => sqlCompare(op, compare(x, v)))
    case in @ In(c, vs) => Option(value(r, c)).map {
        case l: java.lang.Long =>
          integerSets.computeIfAbsent(in, _ => vs.collect { case FilterValue.Integral(y) => y }.toSet)
            .contains(l.longValue())
        case x => vs.exists(v => compare(x, v) == 0)
      }
    case StartsWith(c, p) =>
      Option(value(r, c)).map(x => x.asInstanceOf[String].getBytes(StandardCharsets.UTF_8).startsWith(p))
    case EndsWith(c, p) =>
      Option(value(r, c)).map(x => x.asInstanceOf[String].getBytes(StandardCharsets.UTF_8).endsWith(p))
    case Contains(c, p) =>
      Option(value(r, c)).map(x => x.asInstanceOf[String].getBytes(StandardCharsets.UTF_8).containsSlice(p))
    case l: Like =>
      Option(value(r, c = l.column)).map(x => l.matches(x.asInstanceOf[String].getBytes(StandardCharsets.UTF_8)))
    case Unknown => None
  }

  /** The integer literals of each IN list (lists of thousands are tested against every row). */
  private val integerSets = new java.util.IdentityHashMap[FilterExpr, Set[Long]]()

  private def value(r: Row, c: String): AnyRef =
    c match { case "k" => r.k; case "d" => r.d; case "s" => r.s; case _ => null }
  private def compare(x: AnyRef, v: FilterValue): Int = (x, v) match {
    case (l: java.lang.Long, FilterValue.Integral(y)) => java.lang.Long.compare(l, y)
    case (d: java.lang.Double, FilterValue.Floating(y)) => cmpDouble(d, y)
    case (s: String, FilterValue.Bytes(y)) => cmpBytes(s.getBytes(StandardCharsets.UTF_8), y)
  }

  private def randomFilter(rnd: Random, depth: Int): FilterExpr = {
    val ops = Seq(Eq, NotEq, Lt, LtEq, Gt, GtEq)
    def leaf: FilterExpr = rnd.nextInt(10) match {
      case 0 => Compare("k", ops(rnd.nextInt(6)), FilterValue.Integral(rnd.nextInt(12000) - 1000))
      case 1 => Compare(
          "d",
          ops(rnd.nextInt(6)),
          FilterValue.Floating(Seq(Double.NaN, -0.0, 0.0, rnd.nextGaussian() * 100)(rnd.nextInt(4)))
        )
      case 2 => Compare(
          "s",
          ops(rnd.nextInt(6)),
          FilterValue.Bytes(f"key-${rnd.nextInt(12000)}%06d".take(rnd.nextInt(11)).getBytes)
        )
      case 3 => // a few values, or many (a long IN list is tested by binary search)
        val n = if (rnd.nextBoolean()) 1 + rnd.nextInt(3) else 9 + rnd.nextInt(300)
        In("k", IndexedSeq.fill(n)(FilterValue.Integral(rnd.nextInt(11000))))
      case 9 => // over 1,024 keys (a join's): statistics test the range of the keys only
        val from = rnd.nextInt(11000) - 500
        In(
          "k",
          IndexedSeq.fill(1025 + rnd.nextInt(1500))(FilterValue.Integral(from + rnd.nextInt(1 + rnd.nextInt(3000))))
        )
      case 4 =>
        // a prefix, suffix or slice of some key (or of none: keys stop at 11999), possibly empty
        val key = f"key-${rnd.nextInt(12000)}%06d"
        val from = rnd.nextInt(key.length + 1)
        val slice = key.substring(from, from + rnd.nextInt(key.length - from + 1)).getBytes
        rnd.nextInt(4) match {
          // a LIKE led by a prefix of the key (stripes skipped by it), then a slice of it
          case 3 => Like.of("s", Seq(key.take(rnd.nextInt(11)), new String(slice), ""))
          case 0 => StartsWith("s", key.take(rnd.nextInt(11)).getBytes)
          case 1 => EndsWith("s", key.takeRight(rnd.nextInt(11)).getBytes)
          case _ => Contains("s", slice)
        }
      case 5 => IsNull(Seq("k", "d", "s")(rnd.nextInt(3)))
      case 6 => IsNotNull(Seq("k", "d", "s")(rnd.nextInt(3)))
      case 7 => Compare("missing", Eq, FilterValue.Integral(1))
      case _ => Compare("k", ops(rnd.nextInt(6)), FilterValue.Integral(rnd.nextInt(10000)))
    }
    if (depth == 0) leaf
    else rnd.nextInt(4) match {
      case 0 => And(randomFilter(rnd, depth - 1), randomFilter(rnd, depth - 1))
      case 1 => Or(randomFilter(rnd, depth - 1), randomFilter(rnd, depth - 1))
      case 2 => Not(randomFilter(rnd, depth - 1))
      case _ => leaf
    }
  }

  private def testRows(rnd: Random, n: Int): IndexedSeq[Row] = (0 until n).map { i =>
    Row(
      if (i % 97 == 0) null else java.lang.Long.valueOf(i),
      if (i % 13 == 0) Double.NaN else if (i % 89 == 0) null else java.lang.Double.valueOf(rnd.nextGaussian() * 100),
      if (i % 50 == 0) null else if (i > 9000) "" else f"key-$i%06d"
    )
  }

  private def writeRows(rows: IndexedSeq[Row], options: WriterOptions): java.nio.file.Path = {
    val schema = new Schema(Seq(
      ArrowTestData.field("k", new ArrowType.Int(64, true)),
      ArrowTestData.field("d", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
      ArrowTestData.field("s", ArrowType.Utf8.INSTANCE)
    ).asJava)
    val root = VectorSchemaRoot.create(schema, allocator)
    val file = tempDir("fermion-filter").resolve("f.fermion")
    try {
      root.allocateNew()
      rows.zipWithIndex.foreach { case (r, i) =>
        val k = root.getVector(0).asInstanceOf[BigIntVector]; val d = root.getVector(1).asInstanceOf[Float8Vector]
        val s = root.getVector(2).asInstanceOf[VarCharVector]
        if (r.k == null) k.setNull(i) else k.setSafe(i, r.k.longValue())
        if (r.d == null) d.setNull(i) else d.setSafe(i, r.d.doubleValue())
        if (r.s == null) s.setNull(i) else s.setSafe(i, r.s.getBytes(StandardCharsets.UTF_8))
      }
      root.setRowCount(rows.size)
      write(file, root, options)
    } finally root.close()
    file
  }

  /** 10,000 test rows in stripes of 2,500 rows and pages of 64: `body(rnd, rows, reader, all three columns)`. */
  private def withPagedFile(seed: Long)(body: (
      Random,
      IndexedSeq[Row],
      io.fermion.core.read.FermionFileReader,
      IndexedSeq[(Int, io.fermion.core.read.ProjectedNode)]
  ) => Unit): Unit = {
    val rnd = new Random(seed)
    val rows = testRows(rnd, 10000)
    val reader = open(writeRows(rows, WriterOptions(stripeMaxRows = 2500, pageSize = 4096, pageRows = 64)))
    try body(
        rnd,
        rows,
        reader,
        (0 until 3).map(c => c -> io.fermion.core.read.ProjectedNode.full(reader.schema.fields(c)))
      )
    finally reader.close()
  }

  test("page row ranges never drop a matching row, and decoding only their pages gives the same values (property)") {
    withPagedFile(23) { (rnd, rows, reader, columns) =>
      val full = (0 until reader.numStripes).map(s => reader.readStripeProjected(s, columns, allocator))
      try {
        var selectedTotal = 0L
        var possible = 0L
        for (_ <- 0 until 300) {
          val f = randomFilter(rnd, 3)
          val sf = new StripeFilter(reader, f)
          (0 until reader.numStripes).foreach { s =>
            val first = reader.stripes.firstRows(s).toInt
            val n = reader.stripes.rowCount(s)
            val ranges = sf.rowRanges(s)
            val kept = ranges.rows.toSet
            (0 until n).foreach { i =>
              // fail, not assert: a clue is built for every row, and a filter may list 2,500 keys.
              if (!kept.contains(i) && matches(f, rows(first + i)).contains(true))
                fail(s"$f dropped row ${first + i}: ${rows(first + i)}")
            }
            selectedTotal += kept.size
            possible += n
          }
        }
        assert(selectedTotal < possible * 3 / 4, s"page ranges kept $selectedTotal of $possible rows")
        // Decoding only the selected pages: the selected rows equal a full decode's.
        for (_ <- 0 until 40) {
          val f = randomFilter(rnd, 2)
          val sf = new StripeFilter(reader, f)
          (0 until reader.numStripes).foreach { s =>
            val ranges = sf.rowRanges(s)
            if (!ranges.isEmpty) {
              val part = reader.readStripeProjected(s, columns, allocator, ranges)
              try ranges.rows.foreach { i =>
                  (0 until 3).foreach(c =>
                    if (!java.util.Objects.equals(part(c).getObject(i), full(s)(c).getObject(i)))
                      fail(s"$f stripe $s row $i column $c")
                  )
                }
              finally part.foreach(_.close())
            }
          }
        }
        val before = reader.dataPagesSkipped
        val point = new StripeFilter(reader, Compare("k", Eq, FilterValue.Integral(5123)))
        val hits = (0 until reader.numStripes).map(s => s -> point.rowRanges(s)).filter(!_._2.isEmpty)
        assert(hits.size == 1 && hits.head._2.rowCount <= 64, s"point lookup kept $hits")
        val (s, ranges) = hits.head
        val got = reader.readStripeProjected(s, columns, allocator, ranges)
        try {
          val at = 5123 - reader.stripes.firstRows(s).toInt
          assert(got(0).getObject(at) == 5123L && got(2).getObject(at).toString == "key-005123")
        } finally got.foreach(_.close())
        assert(reader.dataPagesSkipped - before > 50, s"skipped ${reader.dataPagesSkipped - before} pages")
      } finally full.foreach(_.foreach(_.close()))
    }
  }

  test(
    "row filter on decoded columns keeps every matching row, and exactly the matching ones for single predicates (property)"
  ) {
    withPagedFile(31) { (rnd, rows, reader, columns) =>
      (0 until reader.numStripes).foreach { s =>
        val vs = reader.readStripeProjected(s, columns, allocator)
        try {
          val first = reader.stripes.firstRows(s).toInt
          val n = reader.stripes.rowCount(s)
          val byName = Map("k" -> 0, "d" -> 1, "s" -> 2).map { case (name, c) =>
            name -> (reader.schema.fields(c).dataType, vs(c))
          }
          for (depth <- Seq(0, 3); _ <- 0 until 60) {
            val f = randomFilter(rnd, depth)
            val kept = io.fermion.core.read.filter.RowFilter.select(
              f,
              byName.get,
              io.fermion.core.read.RowRanges.all(n)
            ).rows.toSet
            (0 until n).foreach { i =>
              val expected = matches(f, rows(first + i))
              if (expected.contains(true) && !kept.contains(i)) fail(s"$f dropped row ${first + i}: ${rows(first + i)}")
              if (
                depth == 0 && expected.contains(false) && !FilterExpr.columns(f).contains("missing") && kept.contains(i)
              )
                fail(s"$f kept row ${first + i}: ${rows(first + i)}")
            }
          }
        } finally vs.foreach(_.close())
      }
    }
  }

  test("skipped stripes never hold a matching row; sorted keys skip (property, many filters)") {
    val rnd = new Random(11)
    val rows = testRows(rnd, 10000)
    val file = writeRows(rows, WriterOptions(stripeMaxRows = 250, pageSize = 1024))
    val reader = open(file)
    try {
      val stripeRows = (0 until reader.numStripes).map(s =>
        rows.slice(reader.stripes.firstRows(s).toInt, reader.stripes.firstRows(s + 1).toInt)
      )
      var skippedTotal = 0
      for (_ <- 0 until 400) {
        val f = randomFilter(rnd, 3)
        val sf = new StripeFilter(reader, f)
        (0 until reader.numStripes).foreach { s =>
          if (!sf.mightMatch(s)) {
            skippedTotal += 1
            stripeRows(s).foreach(r => if (matches(f, r).contains(true)) fail(s"$f skipped stripe $s holding $r"))
          }
        }
      }
      assert(skippedTotal > 1000, s"only $skippedTotal stripe skips")
      val point = new StripeFilter(reader, Compare("k", Eq, FilterValue.Integral(5123)))
      assert((0 until reader.numStripes).count(point.mightMatch) == 1)
      val prefix = new StripeFilter(reader, StartsWith("s", "key-0051".getBytes))
      assert((0 until reader.numStripes).count(prefix.mightMatch) <= 2)
      // 1,500 keys, too many for bloom filters, between 5,000 and 5,399: two stripes of 250 rows.
      val keys = In("k", IndexedSeq.tabulate(1500)(i => FilterValue.Integral(5000L + i % 400)))
      val kept = (0 until reader.numStripes).filter(new StripeFilter(reader, keys).mightMatch)
      assert(kept.size == 2, s"a long IN list kept stripes $kept")
    } finally reader.close()
  }

  test("NOT IN skips stripes and pages whose values are all listed, and none holding another value") {
    // k in runs of 300 equal keys (a null every 97 rows); stripes of 250 rows, pages of 128 keys.
    val rows = testRows(new Random(5), 10000).zipWithIndex.map { case (r, i) =>
      r.copy(k = if (i % 97 == 0) null else java.lang.Long.valueOf(i / 300))
    }
    val reader = open(writeRows(rows, WriterOptions(stripeMaxRows = 250, pageSize = 1024)))
    try {
      val notIn = Not(In("k", IndexedSeq(2L, 3L, 7L, 19L).map(FilterValue.Integral)))
      val sf = new StripeFilter(reader, notIn)
      var pageRowsSkipped = 0
      (0 until reader.numStripes).foreach { s =>
        val first = reader.stripes.firstRows(s).toInt
        val inStripe = rows.slice(first, reader.stripes.firstRows(s + 1).toInt)
        val matching = inStripe.indices.filter(i => matches(notIn, inStripe(i)).contains(true))
        val keys = inStripe.flatMap(r => Option(r.k)).distinct
        if (!sf.mightMatch(s)) assert(matching.isEmpty, s"stripe $s skipped with rows to keep")
        // exact for a stripe of one listed key (min = max), whatever nulls lie among them
        if (keys.size == 1 && matching.isEmpty) assert(!sf.mightMatch(s), s"stripe $s of key ${keys.head} kept")
        if (matching.nonEmpty) {
          val ranges = sf.rowRanges(s)
          matching.foreach(i => assert(ranges.countIn(i, i + 1) == 1, s"stripe $s dropped its row $i"))
          pageRowsSkipped += inStripe.size - ranges.rowCount
        }
      }
      // key 19 fills stripe 23 (rows 5,750-5,999); stripe 3 holds keys 2 and 3, both listed, but
      // its bounds do not say so (only its pages of one key go)
      assert(!sf.mightMatch(23) && sf.mightMatch(3) && sf.mightMatch(22))
      assert(pageRowsSkipped > 0, "no page of listed keys skipped in the stripes kept")
    } finally reader.close()
  }
}
