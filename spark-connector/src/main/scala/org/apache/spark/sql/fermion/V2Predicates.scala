package org.apache.spark.sql.fermion

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Strategy

/** Spark's own translation of a resolved Catalyst condition into a V2 predicate (what Spark hands
  * a scan or an overwrite), which is `private[sql]`: the `replaceWhere` option goes through it so
  * that it means exactly what `INSERT OVERWRITE ... PARTITION` means. */
object V2Predicates {
  def translate(condition: Expression): Option[Predicate] = DataSourceV2Strategy.translateFilterV2(condition)
}
