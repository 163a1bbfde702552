package io.fermion.core

import scala.util.Random

import io.fermion.core.expr.FilterExpr._
import io.fermion.core.expr.{FilterExpr, FilterValue}
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
    case Compare(_, op, FilterValue.Integral(y)) =>
      x.exists { v =>
        op match {
          case Eq => v == y; case NotEq => v != y; case Lt => v < y; case LtEq => v <= y; case Gt => v > y;
          case GtEq => v >= y
        }
      }
    case In(_, ys) => x.exists(v => ys.contains(FilterValue.Integral(v)))
    case other => throw new IllegalArgumentException(other.toString)
  }

  test("integer-domain comparisons of every width select exactly the matching rows (property)") {
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
        def leaf: FilterExpr = rnd.nextInt(5) match {
          case 0 => IsNull("c")
          case 1 => In("c", IndexedSeq.fill(1 + rnd.nextInt(12))(FilterValue.Integral(literal)))
          case _ => Compare("c", ops(rnd.nextInt(ops.size)), FilterValue.Integral(literal))
        }
        def expr(depth: Int): FilterExpr =
          if (depth == 0) leaf
          else if (rnd.nextBoolean()) And(expr(depth - 1), expr(depth - 1))
          else Or(expr(depth - 1), expr(depth - 1))
        for (_ <- 0 until 30) {
          val f = expr(rnd.nextInt(3))
          // Candidates: the whole stripe, or random stretches of it.
          val candidates =
            if (rnd.nextBoolean()) RowRanges.all(n)
            else RowRanges.of(Seq.fill(1 + rnd.nextInt(4)) { val s = rnd.nextInt(n); (s, s + rnd.nextInt(n - s) + 1) })
          val kept = RowFilter.select(f, name => if (name == "c") Some(t -> v) else None, candidates).rows.toSeq
          val expected = candidates.rows.toSeq.filter(r => holds(f, values(r)))
          assert(kept == expected, s"$t $f")
        }
      } finally v.close()
    }
  }
}
