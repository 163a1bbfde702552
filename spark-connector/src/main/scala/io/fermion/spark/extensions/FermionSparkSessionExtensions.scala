package io.fermion.spark.extensions

import io.fermion.spark.FermionTable
import io.fermion.spark.catalog.FermionSessionCatalog
import org.apache.spark.sql.{SparkSession, SparkSessionExtensions, SparkSessionExtensionsProvider}
import org.apache.spark.sql.catalyst.analysis.ResolvedTable
import org.apache.spark.sql.catalyst.plans.logical.{AlterTableCommand, LogicalPlan}

/** Fermion's Spark session extensions: the SQL table commands (DESCRIBE HISTORY / DETAIL,
  * OPTIMIZE, VACUUM, RESTORE, tags; [[FermionSqlParser]]), Fermion's session catalog installed when
  * none is configured, a check that fails loudly when a Fermion table is altered through a
  * session catalog that cannot do it, [[PrepareAggregatePushdown]], [[PushLikePatterns]], and the planning of
  * lookups of few rows read on the driver ([[io.fermion.spark.read.FermionLocalTakeStrategy]]).
  *
  * Spark loads it by itself from the jar (`META-INF/services`: a `SparkSessionExtensionsProvider`),
  * so `spark-submit --jars fermion.jar` is enough; listing it in `spark.sql.extensions` works too:
  * {{{
  * spark.sql.extensions = io.fermion.spark.extensions.FermionSparkSessionExtensions
  * }}}
  */
class FermionSparkSessionExtensions extends SparkSessionExtensionsProvider {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectParser { (session, delegate) =>
      delegate match {
        case p: FermionSqlParser => p // listed twice (services and spark.sql.extensions): once is enough
        case _ => new FermionSqlParser(session, delegate)
      }
    }
    extensions.injectCheckRule(session => plan => FermionSparkSessionExtensions.check(session, plan))
    extensions.injectOptimizerRule(_ => PrepareAggregatePushdown)
    extensions.injectOptimizerRule(_ => PushLikePatterns)
    extensions.injectPlannerStrategy(_ => io.fermion.spark.read.FermionLocalTakeStrategy)
  }
}

object FermionSparkSessionExtensions {

  /** Set to `false` to keep Spark's own session catalog (Fermion tables then cannot be altered or
    * time-travelled in SQL). */
  val AutoInstallKey = "spark.fermion.sessionCatalog.autoInstall"

  /** Makes Fermion's catalog the session catalog unless the session configures one itself or opts
    * out. Spark resolves `spark_catalog` from the session configuration whenever it is first used
    * (and while it is the built-in one, on every use), so setting it before a statement is planned
    * takes effect for that statement. */
  def installCatalog(session: SparkSession): Unit = {
    val conf = session.conf
    // Spark's own value when nothing is configured is "builtin".
    if (
      conf.get(FermionSessionCatalog.ConfKey, "builtin") == "builtin" && conf.get(AutoInstallKey, "true").trim.toBoolean
    )
      conf.set(FermionSessionCatalog.ConfKey, classOf[FermionSessionCatalog].getName)
  }

  /** ALTER TABLE on a Fermion table resolved by a session catalog that is not Fermion's would
    * change the catalog entry only (the dataset keeps its schema): refuse it, naming the setting. */
  def check(session: SparkSession, plan: LogicalPlan): Unit = plan.foreach {
    case a: AlterTableCommand =>
      a.table match {
        case ResolvedTable(catalog, ident, _: FermionTable, _)
            if !catalog.isInstanceOf[FermionSessionCatalog] &&
              catalog.name() == "spark_catalog" =>
          throw new UnsupportedOperationException(
            s"ALTER TABLE on the Fermion table $ident needs Fermion's session catalog: set " +
              s"${FermionSessionCatalog.ConfKey}=${classOf[FermionSessionCatalog].getName} (the catalog " +
              s"configured now, ${session.conf.get(FermionSessionCatalog.ConfKey, "builtin")}, would change the " +
              "catalog entry and not the table's data)"
          )
        case _ =>
      }
    case _ =>
  }
}
