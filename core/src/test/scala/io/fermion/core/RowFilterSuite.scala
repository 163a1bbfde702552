package io.fermion.core

import scala.util.Random

import io.fermion.core.expr.FilterExpr._
import io.fermion.core.expr.{FilterExpr, FilterValue, Filters}
import io.fermion.core.read.RowRanges
import io.fermion.core.read.filter.RowFilter
import io.fermion.core.schema.FermionType
import org.apache.arrow.vector._
import org.apache.arrow.vector.types.TimeUnit
import org.apache.arrow.vector.types.pojo.{ArrowType, FieldType}
import org.scalatest.funsuite.AnyFunSuite

/** The row filter on integer-domain columns of every width (byte to decimal), with and without nulls, against a
  * plain evaluation of the same filter: comparisons, `<>`, IN, AND / OR, literals at the ends of
  * the domain, and candidate rows that are only part of the stripe. */
class RowFilterSuite extends AnyFunSuite {
  private val allocator = TestFiles.allocator

  /** A column of `n` random values (None: null) that fit `t`, as the Arrow vector the reader decodes. */
  private def column(t: FermionType, rnd: Random, n: Int): (FieldVector, IndexedSeq[Option[Long]]) = {
    val (v, bound) = t match {
      case FermionType.Int8 => (new TinyIntVector("c", allocator), 100L)
      case FermionType.Int16 => (new SmallIntVector("c", allocator), 30000L)
      case FermionType.Int32 => (new IntVector("c", allocator), 2000000000L)
      case FermionType.Date32 => (new DateDayVector("c", allocator), 40000L)
      case FermionType.Int64 => (new BigIntVector("c", allocator), Long.MaxValue / 2)
      case FermionType.Timestamp(_) => (new TimeStampMicroVector("c", allocator), 1L << 52)
      case FermionType.Decimal(p, s) =>
        (new DecimalVector("c", FieldType.nullable(new ArrowType.Decimal(p, s, 128)), allocator), 99999999L)
    }
    // Few distinct values (so that = and IN hit), and sometimes the extremes of the range.
    val pool = IndexedSeq.fill(20)(if (rnd.nextInt(10) == 0) bound * (if (rnd.nextBoolean()) 1 else -1)
    else (rnd.nextLong() % bound))
    // Half the columns without nulls: the reader takes another loop for them.
    val nulls = rnd.nextBoolean()
    val values = IndexedSeq.fill(n)(if (nulls && rnd.nextInt(6) == 0) None else Some(pool(rnd.nextInt(pool.size))))
    v.setInitialCapacity(n); v.allocateNew()
    values.indices.foreach { i =>
      values(i) match {
        case None => v.asInstanceOf[BaseFixedWidthVector].setNull(i)
        case Some(x) =>
          v match {
            case b: TinyIntVector => b.set(i, x.toByte)
            case b: SmallIntVector => b.set(i, x.toShort)
            case b: IntVector => b.set(i, x.toInt)
            case b: DateDayVector => b.set(i, x.toInt)
            case b: BigIntVector => b.set(i, x)
            case b: TimeStampMicroVector => b.set(i, x)
            case b: DecimalVector => b.set(i, x)
          }
      }
    }
    v.setValueCount(n)
    (v, values)
  }

  private def holds(e: FilterExpr, x: Option[Long]): Boolean = e match {
    case And(l, r) => holds(l, x) && holds(r, x)
    case Or(l, r) => holds(l, x) || holds(r, x)
    case IsNull(_) => x.isEmpty
    case IsNotNull(_) => x.nonEmpty
    case Compare(_, op, FilterValue.Integral(y)) => x.exists(v => satisfies(op, java.lang.Long.compare(v, y)))
    case In(_, ys) => x.exists(v => ys.contains(FilterValue.Integral(v)))
    case Not(in: In) => x.exists(v => !holds(in, Some(v))) // SQL: NULL NOT IN (...) is NULL
    case other => throw new IllegalArgumentException(other.toString)
  }

  /** Whether a comparison whose left side minus right side has sign `c` satisfies `op`. */
  private def satisfies(op: Op, c: Int): Boolean = op match {
    case Eq => c == 0; case NotEq => c != 0; case Lt => c < 0; case LtEq => c <= 0; case Gt => c > 0;
    case GtEq => c >= 0
  }

  /** A random AND/OR tree of up to two levels over `leaf`s. */
  private def randomFilter(rnd: Random, leaf: () => FilterExpr): FilterExpr = {
    def expr(depth: Int): FilterExpr =
      if (depth == 0) leaf()
      else if (rnd.nextBoolean()) And(expr(depth - 1), expr(depth - 1))
      else Or(expr(depth - 1), expr(depth - 1))
    expr(rnd.nextInt(3))
  }

  /** The filter keeps exactly the candidate rows `holds` accepts, for candidates that are the whole
    * column of `n` rows or random stretches of it. */
  private def assertSelects(
      rnd: Random,
      n: Int,
      column: (FermionType, FieldVector),
      f: FilterExpr,
      holds: Int => Boolean,
      clue: String
  ): Unit = {
    val candidates =
      if (rnd.nextBoolean()) RowRanges.all(n)
      else RowRanges.of(Seq.fill(1 + rnd.nextInt(4)) { val s = rnd.nextInt(n); (s, s + rnd.nextInt(n - s) + 1) })
    val kept = RowFilter.select(f, name => if (name == "c") Some(column) else None, candidates).rows.toSeq
    assert(kept == candidates.rows.toSeq.filter(holds), clue)
  }

  test("integer-domain comparisons, IN and NOT IN of every width select exactly the matching rows (property)") {
    val rnd = new Random(17)
    val types = Seq(
      FermionType.Int8,
      FermionType.Int16,
      FermionType.Int32,
      FermionType.Date32,
      FermionType.Int64,
      FermionType.Timestamp(false),
      FermionType.Decimal(10, 2),
      FermionType.Decimal(18, 0)
    )
    val ops = Seq(Eq, NotEq, Lt, LtEq, Gt, GtEq)
    for (t <- types; _ <- 0 until 10) {
      val n = 1 + rnd.nextInt(3000)
      val (v, values) = column(t, rnd, n)
      try {
        val present = values.flatten
        def literal: Long = rnd.nextInt(5) match {
          case 0 => Long.MinValue
          case 1 => Long.MaxValue
          case _ if present.nonEmpty => present(rnd.nextInt(present.size)) + rnd.nextInt(3) - 1
          case _ => rnd.nextLong()
        }
        def in = In("c", IndexedSeq.fill(1 + rnd.nextInt(12))(FilterValue.Integral(literal)))
        def leaf: FilterExpr = rnd.nextInt(6) match {
          case 0 => IsNull("c")
          case 1 => in
          case 2 => Not(in)
          case _ => Compare("c", ops(rnd.nextInt(ops.size)), FilterValue.Integral(literal))
        }
        for (_ <- 0 until 30) {
          val f = randomFilter(rnd, () => leaf)
          assertSelects(rnd, n, t -> v, f, r => holds(f, values(r)), s"$t $f")
        }
      } finally v.close()
    }
  }

  /** Unsigned lexicographic order, then length: Spark's order of strings and binary. */
  private def compareUnsigned(a: Array[Byte], b: Array[Byte]): Int = {
    val n = math.min(a.length, b.length)
    var i = 0
    while (i < n) { val c = (a(i) & 0xff) - (b(i) & 0xff); if (c != 0) return c; i += 1 }
    a.length - b.length
  }

  private def holdsBytes(e: FilterExpr, x: Option[Array[Byte]]): Boolean = e match {
    case And(l, r) => holdsBytes(l, x) && holdsBytes(r, x)
    case Or(l, r) => holdsBytes(l, x) || holdsBytes(r, x)
    case IsNull(_) => x.isEmpty
    case IsNotNull(_) => x.nonEmpty
    case Compare(_, op, FilterValue.Bytes(y)) => x.exists(v => satisfies(op, compareUnsigned(v, y)))
    case In(_, ys) => x.exists(v => ys.exists { case FilterValue.Bytes(y) => y.sameElements(v); case _ => false })
    case Not(in: In) => x.exists(v => !holdsBytes(in, Some(v)))
    case StartsWith(_, p) => x.exists(v => v.length >= p.length && v.take(p.length).sameElements(p))
    case EndsWith(_, p) => x.exists(v => v.length >= p.length && v.takeRight(p.length).sameElements(p))
    case Contains(_, p) => x.exists(v => v.indices.inclusive.exists(i => v.slice(i, i + p.length).sameElements(p)))
    case l: Like => x.exists { v =>
        val expected = likeOracle(l).matcher(new String(v, "ISO-8859-1")).matches()
        assert(l.matches(v) == expected, s"$l on ${v.toSeq}") // the leaf's own test (partition values)
        expected
      }
    case Not(m: BytesMatch) => x.exists(v => !holdsBytes(m, Some(v))) // SQL: NOT of NULL is NULL
    case other => throw new IllegalArgumentException(other.toString)
  }

  /** Each [[Like]] the property below made, as a regular expression over bytes (one ISO-8859-1
    * character each) built from the parts it was made of: `.*` between them, each part quoted. */
  private val likeOracle = scala.collection.mutable.Map.empty[Like, java.util.regex.Pattern]

  private def like(parts: Seq[String]): Like = {
    val l = Like.of("c", parts)
    likeOracle(l) = java.util.regex.Pattern.compile(
      parts.map(p => java.util.regex.Pattern.quote(new String(p.getBytes("UTF-8"), "ISO-8859-1"))).mkString(
        "(?s)",
        ".*",
        ""
      ),
      java.util.regex.Pattern.DOTALL
    )
    l
  }

  test(
    "string and binary comparisons, IN, prefixes, suffixes, infixes and LIKE patterns, and NOT of the last five, select exactly the matching rows (property)"
  ) {
    val rnd = new Random(23)
    // Shared prefixes, equal lengths, the empty string and bytes above 0x7f (compared unsigned).
    val pool: IndexedSeq[Array[Byte]] = (IndexedSeq("", "A", "AIR", "AIR REG", "REG AIR", "AIRX", "AIR RE", "MAIL", "B")
      .map(_.getBytes("UTF-8")) ++ IndexedSeq(Array[Byte](-1), Array[Byte](65, -128), Array[Byte](0, 0, 0)) ++
      IndexedSeq("AIR%_\\REG", "straße AIR", "日本語 AIR 日本", "AIRAIR", "\n AIR \n").map(_.getBytes("UTF-8")) ++
      // Longer than the eight bytes searched at once, a match at every offset of a word, and across
      // words; parts of eight bytes and more.
      IndexedSeq(
        "REG MAIL RAIL AIR REG AIR REG AIRAIR MAIL",
        "XXXXXXXA XXXXXXAI XXXXXAIR AIR REG AIR",
        "AAAAAAAAAAAAAAAAAAAAAAAIR",
        "MAIL REG MAIL REG MAIL REG MAIL REG MAIL REG AIR REG MAIL",
        "日本語 AIR REG 日本語 straße AIR REG straße"
      ).map(_.getBytes("UTF-8")) ++
      IndexedSeq.fill(8)(Array.fill(rnd.nextInt(12))((rnd.nextInt(256) - 128).toByte)))
    val ops = Seq(Eq, NotEq, Lt, LtEq, Gt, GtEq)
    for (binary <- Seq(false, true); _ <- 0 until 10) {
      val n = 1 + rnd.nextInt(3000)
      val nulls = rnd.nextBoolean()
      val values = IndexedSeq.fill(n)(if (nulls && rnd.nextInt(6) == 0) None else Some(pool(rnd.nextInt(pool.size))))
      val v: BaseVariableWidthVector =
        if (binary) new VarBinaryVector("c", allocator) else new VarCharVector("c", allocator)
      try {
        v.setInitialCapacity(n); v.allocateNew()
        values.indices.foreach(i => values(i).fold(v.setNull(i))(b => v.setSafe(i, b)))
        v.setValueCount(n)
        val t = if (binary) FermionType.Binary else FermionType.Utf8
        def literal: Array[Byte] =
          if (rnd.nextInt(4) == 0) Array.fill(rnd.nextInt(8))((rnd.nextInt(256) - 128).toByte)
          else pool(rnd.nextInt(pool.size))
        // a slice of a pool value: found at its start, its end, inside, or nowhere
        def slice: Array[Byte] = {
          val b = pool(rnd.nextInt(pool.size)); val from = rnd.nextInt(b.length + 1)
          b.slice(from, from + rnd.nextInt(b.length - from + 1))
        }
        def bytesMatch: BytesMatch = rnd.nextInt(3) match {
          case 0 => StartsWith("c", if (rnd.nextBoolean()) slice else literal)
          case 1 => EndsWith("c", if (rnd.nextBoolean()) slice else literal)
          case _ => Contains("c", if (rnd.nextBoolean()) slice else literal)
        }
        def in = In("c", IndexedSeq.fill(1 + rnd.nextInt(6))(FilterValue.Bytes(literal)))
        // LIKE's parts: empty, overlapping ("AIR" twice in "AIRAIR"), wildcard characters and
        // multi-byte ones taken literally
        val words =
          IndexedSeq(
            "",
            "",
            "A",
            "AIR",
            "IR",
            "R",
            " ",
            "REG",
            "%",
            "_",
            "\\",
            "ß",
            "日本",
            "\n",
            "AIRAIR",
            "X",
            "AIR REG AIR",
            "MAIL REG MAIL REG",
            "AAAAAAAAAIR"
          )
        def likeLeaf: Like = like(Seq.fill(2 + rnd.nextInt(3))(words(rnd.nextInt(words.size))))
        def leaf: FilterExpr = rnd.nextInt(12) match {
          case 10 => likeLeaf
          case 11 => Not(likeLeaf)
          case 0 => IsNull("c")
          case 1 => in
          case 2 | 3 | 4 => bytesMatch
          case 5 => Not(bytesMatch)
          case 6 => Not(in)
          case _ => Compare("c", ops(rnd.nextInt(ops.size)), FilterValue.Bytes(literal))
        }
        for (_ <- 0 until 30) {
          val f = randomFilter(rnd, () => leaf)
          assertSelects(rnd, n, t -> v, f, r => holdsBytes(f, values(r)), s"binary $binary, $f")
        }
      } finally v.close()
    }
  }

  /** Spark's order of doubles, the contract of float filters: NaN equals NaN and sorts above every
    * number, -0.0 equals 0.0. */
  private def sparkOrder(a: Double, b: Double): Int =
    if (a.isNaN || b.isNaN) { if (a.isNaN && b.isNaN) 0 else if (a.isNaN) 1 else -1 }
    else if (a == b) 0
    else if (a < b) -1
    else 1

  test("float and double comparisons select exactly the matching rows, in Spark's order (property)") {
    val rnd = new Random(29)
    val specials = IndexedSeq(
      Double.NaN,
      -0.0,
      0.0,
      Double.PositiveInfinity,
      Double.NegativeInfinity,
      Double.MinPositiveValue,
      1.5,
      -1.5
    )
    val ops = Seq(Eq, NotEq, Lt, LtEq, Gt, GtEq)
    for (single <- Seq(false, true); _ <- 0 until 10) {
      val n = 1 + rnd.nextInt(3000)
      val nulls = rnd.nextBoolean()
      val pool = specials ++ IndexedSeq.fill(10)(rnd.nextGaussian() * 100)
      // As stored: a float column holds its values rounded to float.
      def stored(d: Double): Double = if (single) d.toFloat.toDouble else d
      val values =
        IndexedSeq.fill(n)(if (nulls && rnd.nextInt(6) == 0) None else Some(stored(pool(rnd.nextInt(pool.size)))))
      val v: FieldVector = if (single) new Float4Vector("c", allocator) else new Float8Vector("c", allocator)
      try {
        v.setInitialCapacity(n); v.allocateNew()
        values.indices.foreach { i =>
          (v, values(i)) match {
            case (f: Float4Vector, Some(x)) => f.set(i, x.toFloat)
            case (f: Float8Vector, Some(x)) => f.set(i, x)
            case (f: BaseFixedWidthVector, None) => f.setNull(i)
            case other => throw new IllegalStateException(other.toString)
          }
        }
        v.setValueCount(n)
        val t = if (single) FermionType.Float32 else FermionType.Float64
        for (_ <- 0 until 30) {
          val op = ops(rnd.nextInt(ops.size))
          val x = if (rnd.nextBoolean()) pool(rnd.nextInt(pool.size)) else rnd.nextGaussian() * 100
          val f = Compare("c", op, FilterValue.Floating(x))
          assertSelects(
            rnd,
            n,
            t -> v,
            f,
            r => values(r).exists(d => satisfies(op, sparkOrder(d, x))),
            s"single $single, $f"
          )
        }
      } finally v.close()
    }
  }

  test("LIKE patterns split at their unescaped % and print escaped; _ and stray escapes are not split") {
    assert(Like.split("%special%requests%", '\\').contains(IndexedSeq("", "special", "requests", "")))
    assert(Like.split("a!%b%c!!", '!').contains(IndexedSeq("a%b", "c!")))
    assert(Like.split("50\\%%", '\\').contains(IndexedSeq("50%", "")))
    assert(Like.split("a_b%", '\\').isEmpty && Like.split("ab\\", '\\').isEmpty && Like.split("a\\bc%", '\\').isEmpty)
    val l = Like.of("c", Seq("5%", "a_b\\", ""))
    assert(l.toString == "Like(c,5\\%%a\\_b\\\\%)")
    assert(l.parts.map(new String(_, "UTF-8")).toSeq == Seq("5%", "a_b\\", ""))
    assert(l.matches("5% and a_b\\".getBytes("UTF-8")) && !l.matches("5 and a_b\\".getBytes("UTF-8")))
    assert(Filters.like("c", "%a%b") == Like.of("c", Seq("", "a", "b")))
    assert(Filters.like("c", "a\\%") == Compare("c", Eq, FilterValue.Bytes("a%".getBytes("UTF-8"))))
    assertThrows[IllegalArgumentException](Filters.like("c", "a_c%"))
  }

  test("string matches are equal, hash and print by their pattern's content") {
    val a = And(EndsWith("c", "BRASS".getBytes("UTF-8")), Contains("c", "grün".getBytes("UTF-8")))
    val b = And(EndsWith("c", "BRASS".getBytes("UTF-8")), Contains("c", "grün".getBytes("UTF-8")))
    assert(a == b && a.hashCode == b.hashCode)
    assert(a.toString == "And(EndsWith(c,BRASS),Contains(c,grün))")
    assert(StartsWith("c", "ab".getBytes) != EndsWith("c", "ab".getBytes))
    assert(EndsWith("c", "ab".getBytes) != EndsWith("d", "ab".getBytes))
    assert(Contains("c", "ab".getBytes) != Contains("c", "abc".getBytes))
  }
}
