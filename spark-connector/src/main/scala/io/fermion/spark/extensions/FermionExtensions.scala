package io.fermion.spark.extensions

import org.apache.spark.sql.{SparkSessionExtensions, SparkSessionExtensionsProvider}

/** Fermion's additions to every Spark session that has the jar on its class path: Spark finds
  * this provider through `META-INF/services` (no `spark.sql.extensions` setting needed). */
class FermionExtensions extends SparkSessionExtensionsProvider {
  override def apply(extensions: SparkSessionExtensions): Unit =
    extensions.injectOptimizerRule(_ => IsolateComputedAggregateInputs)
}
