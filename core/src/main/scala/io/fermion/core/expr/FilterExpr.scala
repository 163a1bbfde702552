package io.fermion.core.expr

/** A row filter over top-level columns, used to skip whole stripes whose statistics prove that no
  * row can match. Skipping is the only use: rows of the stripes that remain are still filtered by
  * the engine. Columns are named (resolved per file, case-insensitively); literals are in the
  * column's own domain, see [[FilterValue]].
  *
  * Semantics follow SQL: a comparison with a null value is not true, so null rows never match a
  * comparison, IN or a string match. */
sealed trait FilterExpr extends Serializable

object FilterExpr {
  sealed trait Op extends Serializable
  case object Eq extends Op
  case object NotEq extends Op
  case object Lt extends Op
  case object LtEq extends Op
  case object Gt extends Op
  case object GtEq extends Op

  final case class Compare(column: String, op: Op, value: FilterValue) extends FilterExpr
  final case class In(column: String, values: IndexedSeq[FilterValue]) extends FilterExpr {

    /** The literals as a set of integers, when all are: built once per filter, not per stripe. */
    @transient private[core] lazy val integers: Option[IntegerSet] = IntegerSet.of(values)
  }

  /** A test of a value's bytes against `pattern`, compared, hashed and shown by content: two
    * scans with the same filter are then equal (Spark reuses an exchange between them), and EXPLAIN
    * shows the pattern's text. */
  sealed trait BytesMatch extends FilterExpr with Product {
    def column: String
    def pattern: Array[Byte]

    /** Whether `value` (not null) satisfies the match. */
    def matches(value: Array[Byte]): Boolean
    override def equals(o: Any): Boolean = o match {
      case m: BytesMatch => m.productPrefix == productPrefix && m.column == column &&
        java.util.Arrays.equals(m.pattern, pattern)
      case _ => false
    }
    override def hashCode: Int = (productPrefix, column, java.util.Arrays.hashCode(pattern)).hashCode
    override def toString: String =
      s"$productPrefix($column,${new String(pattern, java.nio.charset.StandardCharsets.UTF_8)})"
  }

  /** The value's bytes start with `prefix` (SQL's `LIKE 'prefix%'`). */
  final case class StartsWith(column: String, prefix: Array[Byte]) extends BytesMatch {
    def pattern = prefix
    def matches(value: Array[Byte]): Boolean =
      value.length >= prefix.length && java.util.Arrays.equals(value, 0, prefix.length, prefix, 0, prefix.length)
  }

  /** The value's bytes end with `suffix` (SQL's `LIKE '%suffix'`). */
  final case class EndsWith(column: String, suffix: Array[Byte]) extends BytesMatch {
    def pattern = suffix
    def matches(value: Array[Byte]): Boolean = value.length >= suffix.length &&
      java.util.Arrays.equals(value, value.length - suffix.length, value.length, suffix, 0, suffix.length)
  }

  /** The value's bytes contain `infix` (SQL's `LIKE '%infix%'`). On UTF-8 strings matching bytes is
    * matching characters: no character's encoding starts inside another's. */
  final case class Contains(column: String, infix: Array[Byte]) extends BytesMatch {
    def pattern = infix
    def matches(value: Array[Byte]): Boolean =
      (0 to value.length - infix.length).exists(at =>
        java.util.Arrays.equals(value, at, at + infix.length, infix, 0, infix.length)
      )
  }

  /** SQL's `LIKE` whose only wildcard is `%`: the value's bytes are the first of [[parts]], then
    * anything, then the next part, and so on, ending with the last part (`'%special%requests%'`:
    * "", "special", "requests", ""). `pattern` is the parts joined by `%`, each `%`, `_` and `\`
    * inside a part preceded by `\` ([[Like.of]]). On UTF-8 strings matching bytes is matching characters, as
    * for [[Contains]]. */
  final case class Like(column: String, pattern: Array[Byte]) extends BytesMatch {

    /** At least two parts: the first starts the value, the last ends it. */
    @transient lazy val parts: Array[Array[Byte]] = Like.parts(pattern)
    def matches(value: Array[Byte]): Boolean = {
      val first = parts(0)
      val last = parts(parts.length - 1)
      val end = value.length - last.length
      if (end < first.length || !startsAt(value, 0, first) || !startsAt(value, end, last)) return false
      var from = first.length
      var k = 1
      while (k < parts.length - 1) {
        val part = parts(k)
        while (from + part.length <= end && !startsAt(value, from, part)) from += 1
        if (from + part.length > end) return false
        from += part.length
        k += 1
      }
      true
    }
    private def startsAt(value: Array[Byte], at: Int, part: Array[Byte]): Boolean =
      java.util.Arrays.equals(value, at, at + part.length, part, 0, part.length)
  }

  object Like {

    /** The `Like` of `parts` (at least two): joined by `%`, with `%`, `_` and `\` escaped in each. */
    def of(column: String, parts: Seq[String]): Like = {
      require(parts.size >= 2, "a LIKE pattern has at least one %")
      Like(
        column,
        parts.map(_.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")).mkString("%")
          .getBytes(java.nio.charset.StandardCharsets.UTF_8)
      )
    }

    /** The parts of a SQL `LIKE` pattern between its `%` wildcards, `escape` making the character
      * after it literal (`%`, `_` or `escape` itself); None when the pattern has a `_` wildcard or
      * an `escape` before another character or at its end (patterns this leaf does not express). */
    def split(pattern: String, escape: Char): Option[IndexedSeq[String]] = {
      val parts = IndexedSeq.newBuilder[String]
      val part = new StringBuilder
      var i = 0
      while (i < pattern.length) {
        val c = pattern.charAt(i)
        if (c == escape) {
          if (i + 1 == pattern.length) return None
          val next = pattern.charAt(i + 1)
          if (next != '%' && next != '_' && next != escape) return None
          part += next
          i += 2
        } else if (c == '_') return None
        else {
          if (c == '%') { parts += part.result(); part.clear() }
          else part += c
          i += 1
        }
      }
      parts += part.result()
      Some(parts.result())
    }

    private def parts(pattern: Array[Byte]): Array[Array[Byte]] =
      split(new String(pattern, java.nio.charset.StandardCharsets.UTF_8), '\\').filter(_.size >= 2)
        .getOrElse(throw new IllegalArgumentException(
          s"not a LIKE pattern of % wildcards: ${new String(pattern, java.nio.charset.StandardCharsets.UTF_8)}"
        ))
        .map(_.getBytes(java.nio.charset.StandardCharsets.UTF_8)).toArray
  }
  final case class IsNull(column: String) extends FilterExpr
  final case class IsNotNull(column: String) extends FilterExpr
  final case class And(left: FilterExpr, right: FilterExpr) extends FilterExpr
  final case class Or(left: FilterExpr, right: FilterExpr) extends FilterExpr
  final case class Not(child: FilterExpr) extends FilterExpr

  /** Matches every row: what an untranslatable part of a filter becomes. */
  case object Unknown extends FilterExpr

  /** The columns a filter tests. */
  def columns(e: FilterExpr): Set[String] = e match {
    case Compare(c, _, _) => Set(c)
    case In(c, _) => Set(c)
    case m: BytesMatch => Set(m.column)
    case IsNull(c) => Set(c)
    case IsNotNull(c) => Set(c)
    case And(l, r) => columns(l) ++ columns(r)
    case Or(l, r) => columns(l) ++ columns(r)
    case Not(c) => columns(c)
    case Unknown => Set.empty
  }

  /** The conjuncts of nested ANDs, in order. */
  def conjuncts(e: FilterExpr): Seq[FilterExpr] = e match {
    case And(l, r) => conjuncts(l) ++ conjuncts(r)
    case other => Seq(other)
  }

  /** `e` with every column reference replaced by `f(column)`. */
  def mapColumns(e: FilterExpr, f: String => String): FilterExpr = e match {
    case Compare(c, op, v) => Compare(f(c), op, v)
    case In(c, vs) => In(f(c), vs)
    case StartsWith(c, p) => StartsWith(f(c), p)
    case EndsWith(c, p) => EndsWith(f(c), p)
    case Contains(c, p) => Contains(f(c), p)
    case Like(c, p) => Like(f(c), p)
    case IsNull(c) => IsNull(f(c))
    case IsNotNull(c) => IsNotNull(f(c))
    case And(l, r) => And(mapColumns(l, f), mapColumns(r, f))
    case Or(l, r) => Or(mapColumns(l, f), mapColumns(r, f))
    case Not(c) => Not(mapColumns(c, f))
    case Unknown => Unknown
  }

  /** Pushes NOT down to the leaves (De Morgan; NOT of a comparison is the opposite comparison,
    * since null rows satisfy neither). NOT of a string match or of IN stays, over that leaf alone: a
    * negated leaf, which null rows do not satisfy either (SQL's `NOT LIKE`, `NOT IN`). NOT of what
    * has no opposite becomes [[Unknown]]. */
  def normalize(e: FilterExpr): FilterExpr = e match {
    case Not(c) => negate(c)
    case And(l, r) => And(normalize(l), normalize(r))
    case Or(l, r) => Or(normalize(l), normalize(r))
    case other => other
  }

  private def negate(e: FilterExpr): FilterExpr = e match {
    case Compare(c, op, v) => Compare(
        c,
        op match {
          case Eq => NotEq; case NotEq => Eq; case Lt => GtEq; case LtEq => Gt; case Gt => LtEq; case GtEq => Lt
        },
        v
      )
    case IsNull(c) => IsNotNull(c)
    case IsNotNull(c) => IsNull(c)
    case And(l, r) => Or(negate(l), negate(r))
    case Or(l, r) => And(negate(l), negate(r))
    case Not(c) => normalize(c)
    case m: BytesMatch => Not(m)
    case in: In => Not(in)
    case _ => Unknown
  }
}

/** A literal in a column's domain: `Integral` for integer types, booleans (0/1), dates (days),
  * timestamps (micros) and decimals up to 18 digits (unscaled, at the column's scale);
  * `Floating` for float and double; `Bytes` for strings (UTF-8) and binary. */
sealed trait FilterValue extends Serializable
object FilterValue {
  final case class Integral(value: Long) extends FilterValue
  final case class Floating(value: Double) extends FilterValue
  final case class Bytes(value: Array[Byte]) extends FilterValue {
    // By content: partition values of fragments are compared, hashed and kept in sets.
    override def equals(o: Any): Boolean = o match {
      case Bytes(other) => java.util.Arrays.equals(value, other)
      case _ => false
    }
    override def hashCode: Int = java.util.Arrays.hashCode(value)
    override def toString: String = s"Bytes(${new String(value, java.nio.charset.StandardCharsets.UTF_8)})"
  }
}
