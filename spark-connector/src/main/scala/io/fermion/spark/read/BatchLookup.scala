package io.fermion.spark.read

import io.fermion.core.scan.BatchSelection
import org.apache.spark.sql.connector.expressions.{Literal, NamedReference}
import org.apache.spark.sql.connector.expressions.filter.Predicate

/** Batches a query names (`=`, `<=>`, `IN`, `<`, `<=`, `>`, `>=` on `batch_id` or on the dataset's
  * batch key column): the core finds them through the batch index instead of scanning. */
object BatchLookup {

  /** The selection all of `predicates` (ANDed) amount to on `columns`, if some of them name batches. */
  def of(predicates: Seq[Predicate], columns: Set[String]): Option[BatchSelection] =
    predicates.flatMap(p => of(p, columns)).reduceOption(_ intersect _)

  private def of(p: Predicate, columns: Set[String]): Option[BatchSelection] = {
    val kids = p.children()
    def column(i: Int): Boolean = kids(i) match {
      case r: NamedReference => r.fieldNames().length == 1 && columns.exists(_.equalsIgnoreCase(r.fieldNames()(0)))
      case _ => false
    }
    def long(e: org.apache.spark.sql.connector.expressions.Expression): Option[Long] = e match {
      case l: Literal[_] =>
        l.value() match {
          case n @ (_: java.lang.Long | _: java.lang.Integer | _: java.lang.Short | _: java.lang.Byte) =>
            Some(n.asInstanceOf[Number].longValue)
          case _ => None
        }
      case _ => None
    }
    def cmp(op: String, v: Long): Option[BatchSelection] = op match {
      case "=" | "<=>" => Some(BatchSelection(Some(Set(v)), None, None))
      case "<" => if (v == Long.MinValue) Some(BatchSelection(Some(Set.empty), None, None))
        else Some(BatchSelection(None, None, Some(v - 1)))
      case "<=" => Some(BatchSelection(None, None, Some(v)))
      case ">" => if (v == Long.MaxValue) Some(BatchSelection(Some(Set.empty), None, None))
        else Some(BatchSelection(None, Some(v + 1), None))
      case ">=" => Some(BatchSelection(None, Some(v), None))
      case _ => None
    }
    val flipped = Map("<" -> ">", "<=" -> ">=", ">" -> "<", ">=" -> "<=", "=" -> "=", "<=>" -> "<=>")
    p.name() match {
      case op @ ("=" | "<=>" | "<" | "<=" | ">" | ">=") if kids.length == 2 =>
        if (column(0)) long(kids(1)).flatMap(cmp(op, _))
        else if (column(1)) long(kids(0)).flatMap(cmp(flipped(op), _))
        else None
      case "IN" if kids.nonEmpty && column(0) =>
        val vs = kids.drop(1).map(long)
        if (vs.forall(_.isDefined)) Some(BatchSelection(Some(vs.flatten.toSet), None, None)) else None
      case "AND" =>
        (kids(0), kids(1)) match {
          case (a: Predicate, b: Predicate) =>
            (of(a, columns), of(b, columns)) match {
              case (Some(x), Some(y)) => Some(x.intersect(y))
              case (x, y) => x.orElse(y)
            }
          case _ => None
        }
      case _ => None
    }
  }
}
