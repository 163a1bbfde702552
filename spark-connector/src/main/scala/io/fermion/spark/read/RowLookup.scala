package io.fermion.spark.read

import org.apache.spark.sql.connector.expressions.{Literal, NamedReference}
import org.apache.spark.sql.connector.expressions.filter.Predicate

/** Rows a query names by `_rowaddr` or `_rowid` (`= v`, `<=> v`, `IN (...)`): what Fermion reads
  * by random access instead of scanning. */
final case class RowLookup(column: String, values: Set[Long]) {
  def intersect(o: RowLookup): Option[RowLookup] =
    if (o.column == column) Some(RowLookup(column, values & o.values)) else None
  override def toString: String = s"$column IN (${values.size} values)"
}

object RowLookup {
  private val Columns = Set(MetadataColumns.RowAddressName, MetadataColumns.RowIdName)

  /** The lookup a top-level predicate is, if it is one. */
  def of(p: Predicate): Option[RowLookup] = {
    val kids = p.children()
    def column: Option[String] = kids.headOption.collect {
      case r: NamedReference if r.fieldNames().length == 1 && Columns.contains(r.fieldNames()(0)) => r.fieldNames()(0)
    }
    def long(e: org.apache.spark.sql.connector.expressions.Expression): Option[Long] = e match {
      case l: Literal[_] => l.value() match { case n: java.lang.Long => Some(n.longValue); case _ => None }
      case _ => None
    }
    p.name() match {
      case "=" | "<=>" if kids.length == 2 => for (c <- column; v <- long(kids(1))) yield RowLookup(c, Set(v))
      case "IN" =>
        column.flatMap { c =>
          val vs = kids.drop(1).map(long)
          if (vs.forall(_.isDefined)) Some(RowLookup(c, vs.flatten.toSet)) else None
        }
      case _ => None
    }
  }

  /** The lookup all of `predicates` (ANDed) amount to, if some of them name rows. */
  def of(predicates: Seq[Predicate]): Option[RowLookup] = {
    val found = predicates.flatMap(of)
    found.headOption.map { first =>
      // Lookups on the two columns at once: keep one (Spark filters the other after the read).
      found.tail.foldLeft(first)((acc, l) => acc.intersect(l).getOrElse(acc))
    }
  }
}
