package io.fermion.core.expr

import java.nio.charset.StandardCharsets

/** Filter expressions from plain values, for Scala and Java callers:
  * {{{
  * import io.fermion.core.expr.Filters._
  * and(gtEq("id", 100L), isNotNull("label"), startsWith("label", "ab"))   // Scala
  * or(endsWith("label", "yz"), contains("label", "mid"))                 // LIKE '%yz', LIKE '%mid%'
  * Filters.and(Filters.gtEq("id", 100L), Filters.isNotNull("label"))      // Java
  * }}}
  * Values map to the column's statistics domain: integers (and booleans as 0/1) for integer,
  * boolean, date (a `java.time.LocalDate`), timestamp (a `java.time.Instant`, or a
  * `java.time.LocalDateTime` for timestamp_ntz) and decimal columns (a `java.math.BigDecimal`
  * with the column's scale); doubles for float and double columns; strings and byte arrays for
  * string and binary columns. */
object Filters {
  import FilterExpr._

  /** `v` in the column domains of [[FilterValue]]. */
  def value(v: Any): FilterValue = v match {
    case n @ (_: java.lang.Long | _: java.lang.Integer | _: java.lang.Short | _: java.lang.Byte) =>
      FilterValue.Integral(n.asInstanceOf[Number].longValue)
    case b: java.lang.Boolean => FilterValue.Integral(if (b) 1L else 0L)
    case d @ (_: java.lang.Double | _: java.lang.Float) => FilterValue.Floating(d.asInstanceOf[Number].doubleValue)
    case s: String => FilterValue.Bytes(s.getBytes(StandardCharsets.UTF_8))
    case b: Array[Byte] => FilterValue.Bytes(b)
    case d: java.time.LocalDate => FilterValue.Integral(d.toEpochDay)
    case i: java.time.Instant =>
      FilterValue.Integral(Math.addExact(Math.multiplyExact(i.getEpochSecond, 1000000L), i.getNano / 1000L))
    case t: java.time.LocalDateTime => value(t.toInstant(java.time.ZoneOffset.UTC))
    case d: java.math.BigDecimal => FilterValue.Integral(d.unscaledValue.longValueExact)
    case other => throw new IllegalArgumentException(s"no filter value for ${other.getClass.getName} $other")
  }

  def eq(column: String, v: Any): FilterExpr = Compare(column, Eq, value(v))
  def notEq(column: String, v: Any): FilterExpr = Compare(column, NotEq, value(v))
  def lt(column: String, v: Any): FilterExpr = Compare(column, Lt, value(v))
  def ltEq(column: String, v: Any): FilterExpr = Compare(column, LtEq, value(v))
  def gt(column: String, v: Any): FilterExpr = Compare(column, Gt, value(v))
  def gtEq(column: String, v: Any): FilterExpr = Compare(column, GtEq, value(v))
  @scala.annotation.varargs
  def in(column: String, vs: Any*): FilterExpr = In(column, vs.map(value).toIndexedSeq)
  def startsWith(column: String, prefix: String): FilterExpr =
    StartsWith(column, prefix.getBytes(StandardCharsets.UTF_8))
  def endsWith(column: String, suffix: String): FilterExpr = EndsWith(column, suffix.getBytes(StandardCharsets.UTF_8))
  def contains(column: String, infix: String): FilterExpr = Contains(column, infix.getBytes(StandardCharsets.UTF_8))

  /** SQL's `column LIKE pattern` (escape `\`) for patterns whose only wildcard is `%`, such as
    * `'%special%requests%'`; a pattern with a `_` wildcard is an IllegalArgumentException. */
  def like(column: String, pattern: String): FilterExpr =
    Like.split(pattern, '\\') match {
      case Some(Seq(only)) => Compare(column, Eq, FilterValue.Bytes(only.getBytes(StandardCharsets.UTF_8)))
      case Some(parts) => Like.of(column, parts)
      case None => throw new IllegalArgumentException(s"LIKE pattern with a _ wildcard or a stray escape: $pattern")
    }
  def isNull(column: String): FilterExpr = IsNull(column)
  def isNotNull(column: String): FilterExpr = IsNotNull(column)
  @scala.annotation.varargs
  def and(fs: FilterExpr*): FilterExpr = fs.reduce(And)
  @scala.annotation.varargs
  def or(fs: FilterExpr*): FilterExpr = fs.reduce(Or)
  def not(f: FilterExpr): FilterExpr = Not(f)
}
