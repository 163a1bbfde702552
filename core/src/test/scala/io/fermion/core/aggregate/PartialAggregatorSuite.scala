package io.fermion.core.aggregate

import java.math.{BigDecimal => JBigDecimal, BigInteger}
import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import io.fermion.core.TestFiles
import io.fermion.core.schema.FermionType
import io.fermion.core.schema.FermionType._
import org.apache.arrow.vector._
import org.scalatest.funsuite.AnyFunSuite

/** The core's aggregation against a plain model: rows held as Scala values, every expression
  * evaluated in exact `BigDecimal` arithmetic with each node's overflow checked, groups and
  * functions computed the obvious way. Partial results are combined as an engine combines them
  * (parts of a sum added), after checking that each part fits the input's type. */
class PartialAggregatorSuite extends AnyFunSuite {
  import AggregateFunction._
  import ValueExpr._

  /** Columns of the model: name, type, and per row the value (None: null). */
  final case class Col(name: String, t: FermionType, values: IndexedSeq[Option[Any]])

  private val allocator = TestFiles.allocator

  private def vector(c: Col, from: Int, until: Int): FieldVector = {
    val v: FieldVector = c.t match {
      case Int32 => new IntVector(c.name, allocator)
      case Int64 => new BigIntVector(c.name, allocator)
      case Float64 => new Float8Vector(c.name, allocator)
      case Utf8 => new VarCharVector(c.name, allocator)
      case Decimal(p, s) => new DecimalVector(c.name, allocator, p, s)
      case other => fail(s"no test vector for $other")
    }
    v.allocateNew()
    (from until until).zipWithIndex.foreach { case (r, i) =>
      (v, c.values(r)) match {
        case (f: BaseFixedWidthVector, None) => f.setNull(i)
        case (w: BaseVariableWidthVector, None) => w.setNull(i)
        case (iv: IntVector, Some(x: Long)) => iv.setSafe(i, x.toInt)
        case (bv: BigIntVector, Some(x: Long)) => bv.setSafe(i, x)
        case (fv: Float8Vector, Some(x: Double)) => fv.setSafe(i, x)
        case (sv: VarCharVector, Some(x: Array[Byte])) => sv.setSafe(i, x)
        case (dv: DecimalVector, Some(x: JBigDecimal)) => dv.setSafe(i, x)
        case other => fail(s"bad test value $other")
      }
    }
    v.setValueCount(until - from)
    v
  }

  /** The largest value of a type: what an unselected row holds (it overflows any arithmetic). */
  private def extreme(t: FermionType): Option[Any] = t match {
    case Int32 => Some(Int.MaxValue.toLong)
    case Int64 => Some(Long.MaxValue)
    case Float64 => Some(Double.MaxValue)
    case Utf8 => Some("\u00ff-unselected".getBytes(UTF_8))
    case Decimal(p, s) => Some(new JBigDecimal(BigInteger.TEN.pow(p).subtract(BigInteger.ONE), s))
    case other => fail(s"no extreme value of $other")
  }

  /** The aggregator's combined results per group key: (keys, values), values combined from parts.
    * With `selections`, each batch's vectors also hold unselected rows of extreme values, which
    * the batch's selection leaves out. */
  private def aggregate(
      a: Aggregation,
      cols: IndexedSeq[Col],
      batchRows: Seq[Int],
      selections: Option[Random] = None
  ): Map[Seq[Any], Seq[Any]] = {
    val agg = new PartialAggregator(a, cols.map(_.name))
    var at = 0
    batchRows.foreach { n =>
      val physical = selections match {
        case None => (at until at + n).map(Some(_))
        case Some(rnd) => (at until at + n).flatMap(r => if (rnd.nextInt(3) == 0) Seq(None, Some(r)) else Seq(Some(r)))
      }
      val padded = cols.map(c => c.copy(values = physical.map(_.map(c.values).getOrElse(extreme(c.t)))))
      val vs = padded.map(vector(_, 0, physical.size))
      val selection = if (selections.isEmpty) null else physical.indices.filter(physical(_).nonEmpty).toArray
      try agg.add(vs, physical.size, selection)
      finally vs.foreach(_.close())
      at += n
    }
    val combined = scala.collection.mutable.LinkedHashMap.empty[Seq[Any], IndexedSeq[Option[Any]]]
    agg.result(allocator, rowsPerBatch = 7).foreach { batch =>
      try (0 until batch.head.getValueCount).foreach { r =>
          val key = a.groupBy.indices.map(k => read(batch(k), r).map(normal).orNull)
          val values = a.functions.indices.map(f => read(batch(a.groupBy.size + f), r))
          a.functions.zip(values).foreach {
            case (Sum(e), Some(v: JBigDecimal)) =>
              e.dataType match {
                case Decimal(p, _) => assert(v.unscaledValue.abs.compareTo(BigInteger.TEN.pow(p)) < 0, s"part $v of $e")
                case _ =>
              }
            case _ =>
          }
          combined(key) = combined.get(key) match {
            case None => values
            case Some(prev) =>
              a.functions.indices.map { f =>
                (prev(f), values(f)) match {
                  case (None, x) => x
                  case (x, None) => x
                  case (Some(x: JBigDecimal), Some(y: JBigDecimal)) => Some(x.add(y))
                  case (Some(x: Long), Some(y: Long)) => Some(BigInteger.valueOf(x).add(BigInteger.valueOf(y)))
                  case (Some(x: BigInteger), Some(y: Long)) => Some(x.add(BigInteger.valueOf(y)))
                  case (Some(x: Double), Some(y: Double)) => Some(x + y)
                  case other => fail(s"two partial rows for min/max or unexpected values: $other")
                }
              }
          }
        }
      finally batch.foreach(_.close())
    }
    combined.map { case (k, v) => k -> v.map(_.map(normal).orNull) }.toMap
  }

  private def read(v: FieldVector, r: Int): Option[Any] =
    if (v.isNull(r)) None
    else v match {
      case b: BigIntVector => Some(b.get(r))
      case i: IntVector => Some(i.get(r).toLong)
      case d: DecimalVector => Some(d.getObject(r))
      case f: Float8Vector => Some(f.get(r))
      case s: VarCharVector => Some(new String(s.get(r), UTF_8))
    }

  /** Values compared: integers as BigInteger, decimals without trailing zeros. */
  private def normal(v: Any): Any = v match {
    case l: Long => BigInteger.valueOf(l)
    case d: JBigDecimal => d.stripTrailingZeros
    case b: Array[Byte] => new String(b, UTF_8)
    case other => other
  }

  // ---- the model ----

  final class Overflow extends RuntimeException

  /** A node's value on row r (None: null), exactly, or Overflow thrown under Raise. */
  private def model(e: ValueExpr, cols: Map[String, Col], r: Int, rule: OverflowRule): Option[JBigDecimal] = {
    def fits(v: JBigDecimal, t: FermionType): Option[JBigDecimal] = t match {
      case Decimal(p, _) =>
        if (v.unscaledValue.abs.compareTo(BigInteger.TEN.pow(p)) < 0) Some(v)
        else if (rule == OverflowRule.Raise) throw new Overflow
        else None
      case Int64 =>
        if (v.toBigInteger.bitLength < 64) Some(v)
        else if (rule == OverflowRule.Raise) throw new Overflow
        else Some(new JBigDecimal(v.toBigInteger.longValue))
      case Int32 =>
        if (v.toBigInteger.bitLength < 32) Some(v)
        else if (rule == OverflowRule.Raise) throw new Overflow
        else Some(new JBigDecimal(v.toBigInteger.intValue))
      case _ => Some(v)
    }
    def scaleTo(v: JBigDecimal, t: FermionType) = t match { case Decimal(_, s) => v.setScale(s); case _ => v }
    e match {
      case Column(n, _) =>
        cols(n).values(r).map {
          case l: Long => new JBigDecimal(l)
          case d: JBigDecimal => d
          case x: Double => new JBigDecimal(x)
        }
      case Literal(null, _) => None
      case Literal(v: Long, _) => Some(new JBigDecimal(v))
      case Literal(v: JBigDecimal, _) => Some(v)
      case Arithmetic(op, l, rt, t) =>
        for {
          a <- model(l, cols, r, rule); b <- model(rt, cols, r, rule);
          v <- fits(
            scaleTo(
              op match {
                case Add => a.add(b); case Subtract => a.subtract(b); case Multiply => a.multiply(b)
              },
              t
            ),
            t
          )
        } yield v
      case Negate(c, t) => model(c, cols, r, rule).flatMap(v => fits(v.negate, t))
      case Cast(c, t) => model(c, cols, r, rule).flatMap(v => fits(scaleTo(v, t), t))
      case other => fail(s"no model for $other")
    }
  }

  private def reference(a: Aggregation, cols: IndexedSeq[Col]): Map[Seq[Any], Seq[Any]] = {
    val byName = cols.map(c => c.name -> c).toMap
    val rows = cols.head.values.size
    val keyOf = (r: Int) => a.groupBy.map(c => byName(c.name).values(r).map(normal).orNull)
    val inputs = a.functions.map {
      case CountRows => None
      case Count(e) => Some(e); case Sum(e) => Some(e); case Min(e) => Some(e); case Max(e) => Some(e)
    }
    val strings = inputs.map(_.collect { case Column(n, Utf8) => byName(n) })
    val values = (0 until rows).map(r =>
      inputs.zip(strings).map { case (in, str) =>
        if (str.nonEmpty) None else in.map(e => model(e, byName, r, a.overflow))
      }
    )
    val groups = (0 until rows).groupBy(keyOf)
    val all = if (groups.isEmpty && a.groupBy.isEmpty)
      scala.collection.immutable.Map(Seq.empty[Any] -> IndexedSeq.empty[Int])
    else groups
    all.map { case (k, rs) =>
      k -> a.functions.indices.map { f =>
        val vs = rs.flatMap(r => values(r)(f).flatten)
        val bytes = strings(f).toSeq.flatMap(c => rs.flatMap(r => c.values(r))).map(_.asInstanceOf[Array[Byte]])
        val ordered = bytes.sortWith((x, y) => java.util.Arrays.compareUnsigned(x, y) < 0).map(new String(_, UTF_8))
        a.functions(f) match {
          case CountRows => BigInteger.valueOf(rs.size.toLong)
          case Count(_) => BigInteger.valueOf(vs.size.toLong)
          case Sum(e) =>
            if (vs.isEmpty) null
            else {
              val total = vs.reduce(_ add _)
              e.dataType match { case _: Decimal => total.stripTrailingZeros; case _ => total.toBigIntegerExact }
            }
          case Min(Column(_, Utf8)) => ordered.headOption.orNull
          case Max(Column(_, Utf8)) => ordered.lastOption.orNull
          case Count(Column(_, Utf8)) => BigInteger.valueOf(bytes.size.toLong)
          case Min(e) => if (vs.isEmpty) null else norm(vs.min, e.dataType)
          case Max(e) => if (vs.isEmpty) null else norm(vs.max, e.dataType)
        }
      }
    }
  }

  private def norm(v: JBigDecimal, t: FermionType): Any = t match {
    case _: Decimal => v.stripTrailingZeros
    case _ => v.toBigIntegerExact
  }

  // ---- random data and expressions ----

  private def decimal(rnd: Random, p: Int, s: Int, big: Boolean): JBigDecimal = {
    val digits = if (big) 1 + rnd.nextInt(p) else 1 + rnd.nextInt(math.min(p, 7))
    val unscaled = new BigInteger(digits * 4, rnd.self).mod(BigInteger.TEN.pow(digits))
    new JBigDecimal(if (rnd.nextBoolean()) unscaled.negate else unscaled, s)
  }

  private def columns(rnd: Random, rows: Int): IndexedSeq[Col] = {
    def opt[T](nulls: Double)(v: => T): Option[Any] = if (rnd.nextDouble() < nulls) None else Some(v)
    // Short keys (at most 7 bytes) and long ones, some of equal length differing only at the end.
    val words =
      IndexedSeq("", "a", "bb", "\u00e9t\u00e9", "zz", "1234567", "12345678", "a-longer-key-1", "a-longer-key-2")
    val runs = IndexedSeq.tabulate(rows)(r => (r / 37).toLong) // a sorted key: runs of rows
    IndexedSeq(
      Col("k", Int32, IndexedSeq.fill(rows)(opt(0.1)(rnd.nextInt(5).toLong))),
      Col("s", Utf8, IndexedSeq.fill(rows)(opt(0.1)(words(rnd.nextInt(words.size)).getBytes(UTF_8)))),
      Col("run", Int64, runs.map(Some(_))),
      Col("price", Decimal(15, 2), IndexedSeq.fill(rows)(opt(0.05)(decimal(rnd, 15, 2, big = rnd.nextInt(20) == 0)))),
      Col("disc", Decimal(4, 2), IndexedSeq.fill(rows)(opt(0.2)(decimal(rnd, 4, 2, big = true)))),
      Col("wide", Decimal(38, 6), IndexedSeq.fill(rows)(opt(0.2)(decimal(rnd, 38, 6, big = rnd.nextInt(4) == 0)))),
      Col(
        "n",
        Int64,
        IndexedSeq.fill(rows)(opt(0.1)(rnd.nextInt(6) match {
          case 0 => Long.MaxValue - rnd.nextInt(3); case 1 => Long.MinValue + rnd.nextInt(3);
          case _ => rnd.nextLong() % 1000
        }))
      ),
      Col("i", Int32, IndexedSeq.fill(rows)(opt(0.1)((rnd.nextInt() >> rnd.nextInt(31)).toLong))),
      Col("x", Float64, IndexedSeq.fill(rows)(opt(0.1)(rnd.nextInt(1000) / 8.0)))
    )
  }

  /** A random decimal expression with exact node types (decimals only). */
  private def decimalExpr(rnd: Random, depth: Int): ValueExpr = {
    val leaves = IndexedSeq[() => ValueExpr](
      () => Column("price", Decimal(15, 2)),
      () => Column("disc", Decimal(4, 2)),
      () => Column("wide", Decimal(38, 6)),
      () => Literal(new JBigDecimal(rnd.nextInt(200) - 100).movePointLeft(1), Decimal(4, 1)),
      () => Cast(Column("i", Int32), Decimal(10, 0)),
      () => Cast(Column("disc", Decimal(4, 2)), Decimal(6 + rnd.nextInt(30), 3))
    )
    if (depth == 0 || rnd.nextInt(3) == 0) leaves(rnd.nextInt(leaves.size))()
    else {
      val (l, r) = (decimalExpr(rnd, depth - 1), decimalExpr(rnd, depth - 1))
      val (Decimal(p1, s1), Decimal(p2, s2)) = (l.dataType, r.dataType): @unchecked
      rnd.nextInt(4) match {
        case 0 if s1 + s2 <= 38 => Arithmetic(Multiply, l, r, Decimal(math.min(38, p1 + p2 + 1), s1 + s2))
        case 1 => Negate(l, l.dataType)
        case k =>
          val s = math.max(s1, s2)
          // Sometimes a precision narrower than needed, so that values overflow.
          val p = math.max(s + 1, math.min(38, math.max(p1 - s1, p2 - s2) + s + 1 - rnd.nextInt(3)))
          Arithmetic(if (k == 2) Add else Subtract, l, r, Decimal(p, s))
      }
    }
  }

  private def integerExpr(rnd: Random): ValueExpr = rnd.nextInt(5) match {
    case 0 => Arithmetic(Add, Column("n", Int64), Literal(rnd.nextLong() % 10, Int64), Int64)
    case 1 => Arithmetic(Multiply, Column("n", Int64), Column("n", Int64), Int64)
    case 2 => Arithmetic(Add, Column("i", Int32), Column("i", Int32), Int32)
    case 3 => Negate(Column("i", Int32), Int32)
    case _ => Arithmetic(Subtract, Cast(Column("i", Int32), Int64), Column("n", Int64), Int64)
  }

  private def randomAggregation(rnd: Random): Aggregation = {
    val groupBy = rnd.shuffle(IndexedSeq(Column("k", Int32), Column("s", Utf8), Column("run", Int64)))
      .take(rnd.nextInt(3))
    val fs = IndexedSeq.fill(1 + rnd.nextInt(4)) {
      val e = if (rnd.nextBoolean()) decimalExpr(rnd, 3) else integerExpr(rnd)
      rnd.nextInt(5) match {
        case 0 => CountRows; case 1 => Count(e); case 2 => Min(e); case 3 => Max(e); case _ => Sum(e)
      }
    }
    Aggregation(groupBy, fs, if (rnd.nextBoolean()) OverflowRule.Raise else OverflowRule.WrapOrNull)
  }

  test("random aggregations of random decimal and integer expressions match exact arithmetic, rows selected or not") {
    val rnd = new Random(41)
    var raised = 0
    var checked = 0
    for (round <- 0 until 500) {
      val rows = 1 + rnd.nextInt(400)
      val cols = columns(rnd, rows)
      val a = randomAggregation(rnd)
      assert(Aggregation.check(a).isEmpty, s"$a: ${Aggregation.check(a)}")
      val splits = Iterator.continually(1 + rnd.nextInt(150)).scanLeft(0)(_ + _).takeWhile(_ < rows).toSeq :+ rows
      val batches = splits.zip(splits.tail).map { case (a, b) => b - a }
      val expected = scala.util.Try(reference(a, cols))
      expected match {
        case scala.util.Failure(_: Overflow) =>
          assert(a.overflow == OverflowRule.Raise)
          intercept[ArithmeticOverflowException](aggregate(a, cols, batches, if (round % 2 == 0) Some(rnd) else None))
          raised += 1
        case scala.util.Failure(t) => throw t
        case scala.util.Success(ref) =>
          val got = aggregate(a, cols, batches, if (round % 2 == 0) Some(rnd) else None)
          assert(got == ref, s"round $round: $a")
          checked += 1
      }
    }
    assert(raised > 20 && checked > 250, s"raised $raised, checked $checked")
  }

  test("a sum that leaves its input's type comes back in parts that fit it, and adds up exactly") {
    val rows = 1000
    val cols = IndexedSeq(
      Col("g", Int32, IndexedSeq.tabulate(rows)(r => Some((r % 2).toLong))),
      Col(
        "d",
        Decimal(3, 1),
        IndexedSeq.tabulate(rows)(r => Some(new JBigDecimal(if (r % 2 == 0) "99.9" else "-12.3")))
      ),
      Col("n", Int64, IndexedSeq.tabulate(rows)(_ => Some(Long.MaxValue)))
    )
    val a = Aggregation(
      IndexedSeq(Column("g", Int32)),
      IndexedSeq(Sum(Column("d", Decimal(3, 1))), Sum(Column("n", Int64)), CountRows)
    )
    val agg = new PartialAggregator(a, cols.map(_.name))
    val vs = cols.map(vector(_, 0, rows))
    try agg.add(vs, rows)
    finally vs.foreach(_.close())
    val out = agg.result(allocator).toIndexedSeq
    val rowsOut = out.map(_.head.getValueCount).sum
    // 500 x 99.9 = 49950.0 needs ceil(49950 / 99.9) = 500 parts; 500 x Long.MaxValue needs 500.
    assert(rowsOut == 500 + 500, s"$rowsOut output rows")
    out.foreach(_.foreach(_.close()))
    assert(aggregate(a, cols, Seq(rows)) == reference(a, cols))
  }

  test("groups by strings, nulls and sorted keys; min and max of strings by unsigned bytes") {
    val values = IndexedSeq("", "a", "\u00e9", "b", null, "a", "", null, "\u00ff\u00ff", "ab")
    val cols = IndexedSeq(
      Col("s", Utf8, values.map(v => Option(v).map(_.getBytes(UTF_8)))),
      Col("t", Utf8, values.reverse.map(v => Option(v).map(_.getBytes(UTF_8))))
    )
    val a =
      Aggregation(IndexedSeq(Column("s", Utf8)), IndexedSeq(CountRows, Min(Column("t", Utf8)), Max(Column("t", Utf8))))
    val got = aggregate(a, cols, Seq(3, 7))
    assert(got.keySet == Set("", "a", "\u00e9", "b", null, "\u00ff\u00ff", "ab").map(Seq(_)))
    // t is s reversed: group "a" (rows 1, 5) sees "\u00ff\u00ff" and null; the null group (rows 4, 7) "a" and "\u00e9".
    assert(got(Seq("a")) == Seq(BigInteger.valueOf(2), "\u00ff\u00ff", "\u00ff\u00ff"))
    assert(got(Seq(null)) == Seq(BigInteger.valueOf(2), "a", "\u00e9"))
    val all = aggregate(
      Aggregation(IndexedSeq.empty, IndexedSeq(Max(Column("t", Utf8)), Min(Column("t", Utf8)))),
      cols,
      Seq(10)
    )
    assert(all(Seq.empty) == Seq("\u00ff\u00ff", ""))
  }

  test("tens of thousands of groups of every key kind, over several batches") {
    val rnd = new Random(3)
    val rows = 60000
    def word(i: Int) = if (i % 3 == 0) s"w$i" else s"a-longer-string-key-$i" // short and long keys
    val cols = IndexedSeq(
      Col(
        "s",
        Utf8,
        IndexedSeq.tabulate(rows)(r => if (r % 101 == 0) None else Some(word(rnd.nextInt(20000)).getBytes(UTF_8)))
      ),
      Col("n", Int64, IndexedSeq.tabulate(rows)(_ => Some(rnd.nextInt(30000).toLong))),
      Col(
        "w",
        Decimal(38, 0),
        IndexedSeq.tabulate(rows)(_ =>
          Some(new JBigDecimal(BigInteger.TEN.pow(30).add(BigInteger.valueOf(rnd.nextInt(9000)))))
        )
      ),
      Col("v", Decimal(15, 2), IndexedSeq.tabulate(rows)(_ => Some(decimal(rnd, 15, 2, big = false))))
    )
    for (key <- Seq("s", "n", "w")) {
      val k = Column(key, cols.find(_.name == key).get.t)
      val v = Column("v", Decimal(15, 2))
      val a = Aggregation(IndexedSeq(k), IndexedSeq(CountRows, Sum(v), Min(v), Max(Column("s", Utf8))))
      val got = aggregate(a, cols, Seq(20000, 1, 19999, 20000), if (key == "n") Some(rnd) else None)
      assert(got.size > 5000, s"${got.size} groups by $key")
      assert(got == reference(a, cols), key)
    }
  }

  test("without GROUP BY, no rows still give one row: counts 0, sums and extremes null") {
    val cols = IndexedSeq(Col("n", Int64, IndexedSeq.empty))
    val a = Aggregation(IndexedSeq.empty, IndexedSeq(CountRows, Sum(Column("n", Int64)), Max(Column("n", Int64))))
    assert(aggregate(a, cols, Seq.empty) == scala.collection.immutable.Map(Seq.empty -> Seq(
      BigInteger.ZERO,
      null,
      null
    )))
    val grouped = Aggregation(IndexedSeq(Column("n", Int64)), IndexedSeq(CountRows))
    assert(aggregate(grouped, cols, Seq.empty).isEmpty)
  }

  test("floating point sums add in row order; what the core would have to round is refused") {
    val cols = IndexedSeq(Col("x", Float64, IndexedSeq(Some(0.1), Some(0.2), None, Some(0.3))))
    val got = aggregate(Aggregation(IndexedSeq.empty, IndexedSeq(Sum(Column("x", Float64)))), cols, Seq(2, 2))
    assert(got(Seq.empty) == Seq(0.1 + 0.2 + 0.3))
    val d = Column("d", Decimal(10, 2))
    val refused = Seq(
      Sum(Arithmetic(Multiply, d, d, Decimal(21, 3))), // the exact scale is 4
      Sum(Arithmetic(Add, d, Literal(new JBigDecimal("1.5"), Decimal(2, 1)), Decimal(12, 1))),
      Sum(Cast(d, Decimal(10, 1))),
      Sum(Arithmetic(Add, Column("f", Float32), Column("f", Float32), Float32)),
      Min(Column("x", Float64)),
      Sum(Column("s", Utf8))
    )
    refused.foreach(f => assert(Aggregation.check(Aggregation(IndexedSeq.empty, IndexedSeq(f))).nonEmpty, f))
    assert(Aggregation.check(Aggregation(IndexedSeq(Column("x", Float64)), IndexedSeq(CountRows))).nonEmpty)
  }
}
