package io.fermion.spark.extensions

import org.apache.spark.sql.{SparkSessionExtensions, SparkSessionExtensionsProvider}

/** Fermion's additions to every Spark session that has the jar on its class path: Spark finds
  * this provider through `META-INF/services` (no `spark.sql.extensions` setting needed). */
class FermionExtensions extends SparkSessionExtensionsProvider {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectOptimizerRule(_ => IsolateComputedAggregateInputs)
    // CONVERT TO FERMION / CONVERT TO PARQUET; every other statement goes to Spark's parser.
    extensions.injectParser { (_, delegate) =>
      delegate match {
        case p: ConvertSqlParser => p
        case _ => new ConvertSqlParser(delegate)
      }
    }
  }
}
