package io.fermion.spark.tools

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, SubqueryAlias}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.StructType

/** One Parquet file to convert: its path, size, and the values of the partition columns its
  * directory names (`year=2024/...`). */
final case class ParquetInputFile(path: String, bytes: Long, modificationTime: Long, partitionValues: InternalRow)

/** Parquet files as Spark lists them for a path or a table: the files of every partition, the
  * data columns (merged over the files as Spark infers them) and the partition columns. */
final case class ParquetSource(
    description: String,
    root: Option[String],
    files: IndexedSeq[ParquetInputFile],
    dataSchema: StructType,
    partitionSchema: StructType
) {

  /** The columns of a converted row: data columns, then partition columns (as Spark reads them). */
  def schema: StructType = StructType(dataSchema.fields ++ partitionSchema.fields)
}

object ParquetSource {

  /** The Parquet files under `path` (a file, a directory, or partitioned directories), with
    * Spark's schema inference and partition discovery. A type Spark cannot read fails here, with
    * the column named when the Parquet footers can tell which. */
  def ofPath(spark: SparkSession, path: String, readOptions: Map[String, String]): ParquetSource = {
    val df =
      try spark.read.options(readOptions).parquet(path)
      catch { case e: Exception => throw ParquetSchemaCheck.explain(spark, path, e) }
    of(df.queryExecution.analyzed, s"Parquet $path").getOrElse(
      throw new IllegalStateException(s"Spark did not read $path as Parquet files")
    )
  }

  /** The Parquet files of a table or of any plan that reads Parquet files only, or None. Delta
    * and other formats that extend Spark's Parquet reader are not taken (their files need their
    * own reader): they are converted through Spark's plan instead. */
  def of(plan: LogicalPlan, description: String): Option[ParquetSource] = {
    def strip(p: LogicalPlan): LogicalPlan = p match {
      case s: SubqueryAlias => strip(s.child)
      case other => other
    }
    strip(plan) match {
      case l: LogicalRelation =>
        l.relation match {
          case h: HadoopFsRelation if h.fileFormat.getClass == classOf[ParquetFileFormat] && h.bucketSpec.isEmpty =>
            val files = h.location.listFiles(Nil, Nil).flatMap { dir =>
              val values = dir.values.copy()
              dir.files.map(f => ParquetInputFile(f.getPath.toString, f.getLen, f.getModificationTime, values))
            }.sortBy(_.path).toIndexedSeq
            Some(ParquetSource(
              description,
              h.location.rootPaths.headOption.map(_.toString),
              files,
              h.dataSchema,
              h.partitionSchema
            ))
          case _ => None
        }
      case _ => None
    }
  }

  def ofTable(spark: SparkSession, table: String): Either[ParquetSource, DataFrame] = {
    val df = spark.table(table)
    of(df.queryExecution.analyzed, s"table $table").toLeft(df)
  }

  def exists(spark: SparkSession, path: String): Boolean = {
    val p = new Path(path)
    p.getFileSystem(spark.sparkContext.hadoopConfiguration).exists(p)
  }
}

/** Names the column when Spark refuses a Parquet schema: Spark's own message names the Parquet
  * type (`Illegal Parquet type: INT64 (TIMESTAMP(NANOS,true))`) but not always the column, so the
  * footers are read and each top-level column converted on its own. */
object ParquetSchemaCheck {
  import org.apache.parquet.hadoop.ParquetFileReader
  import org.apache.parquet.hadoop.util.HadoopInputFile
  import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter

  def explain(spark: SparkSession, path: String, e: Exception): Exception = {
    val conf = spark.sparkContext.hadoopConfiguration
    val p = new Path(path)
    val fs = p.getFileSystem(conf)
    val first =
      try {
        if (!fs.exists(p)) None
        else if (fs.getFileStatus(p).isFile) Some(p)
        else {
          val it = fs.listFiles(p, true)
          var found: Option[Path] = None
          while (found.isEmpty && it.hasNext) {
            val f = it.next().getPath
            val hidden = f.toUri.getPath.stripPrefix(fs.makeQualified(p).toUri.getPath).split('/')
              .exists(n => n.startsWith("_") || n.startsWith("."))
            if (!hidden && f.getName.endsWith(".parquet")) found = Some(f)
          }
          found
        }
      } catch { case _: Exception => None }
    first.flatMap { f =>
      try {
        val reader = ParquetFileReader.open(HadoopInputFile.fromPath(f, conf))
        val schema =
          try reader.getFooter.getFileMetaData.getSchema
          finally reader.close()
        val converter = new ParquetToSparkSchemaConverter(org.apache.spark.sql.internal.SQLConf.get)
        import scala.jdk.CollectionConverters._
        val why = Option(e.getMessage).getOrElse(e.toString).linesIterator.next()
        def unsupported(field: org.apache.parquet.schema.Type, detail: String): Exception =
          new io.fermion.core.schema.UnsupportedColumnTypeException(
            field.getName,
            s"Parquet ${field.toString.trim.replaceAll("\\s+", " ")}",
            s"$detail; nothing was written"
          )
        // A column Spark cannot read at all, else one Spark reads as a type Fermion cannot store.
        schema.getFields.asScala.iterator.map { field =>
          scala.util.Try(converter.convert(new org.apache.parquet.schema.MessageType("m", field))) match {
            case scala.util.Failure(_) => Some(unsupported(field, s"Spark cannot read it ($why)"))
            case scala.util.Success(t) =>
              scala.util.Try(io.fermion.spark.SparkTypeMapping.validate(t)).failed.toOption
                .map(_ =>
                  unsupported(field, s"Spark reads it as ${t.fields.head.dataType.sql}, which Fermion does not store")
                )
          }
        }.collectFirst { case Some(x) => x }
      } catch { case _: Exception => None }
    }.getOrElse(e)
  }
}
