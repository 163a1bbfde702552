package io.fermion.spark.write

/** What a write means for the dataset, decided while the write is planned and carried to the
  * commit, which makes it part of the atomic step (docs/table-format.md, 11.3 and 11.4):
  *
  *   - [[WriteIntent.Append]]: new rows after the existing ones (INSERT INTO, save mode append);
  *   - [[WriteIntent.Create]]: the dataset must not exist (save modes errorifexists and ignore,
  *     CREATE TABLE [AS SELECT]); a dataset created by another writer meanwhile makes the commit
  *     fail with "already exists", as the existence check would have had it come first;
  *   - [[WriteIntent.Overwrite]]: the rows replaced whatever they are at commit time (save mode
  *     overwrite, INSERT OVERWRITE, REPLACE TABLE); also over a dataset created meanwhile;
  *   - [[WriteIntent.ReplaceWhere]]: the partitions a predicate on partition columns selects are
  *     replaced (`INSERT OVERWRITE ... PARTITION (k = v)`, the `replaceWhere` option); the written
  *     rows must satisfy it (docs/table-format.md 6.7);
  *   - [[WriteIntent.DynamicOverwrite]]: the partitions the written rows fall in are replaced
  *     (`partitionOverwriteMode` dynamic), the others stay.
  *
  * (Compaction does not go through Spark's write path: the core plans and commits it.)
  */
sealed trait WriteIntent

object WriteIntent {
  case object Append extends WriteIntent
  case object Create extends WriteIntent
  case object Overwrite extends WriteIntent
  final case class ReplaceWhere(predicate: io.fermion.core.expr.FilterExpr, text: String) extends WriteIntent
  case object DynamicOverwrite extends WriteIntent
}
