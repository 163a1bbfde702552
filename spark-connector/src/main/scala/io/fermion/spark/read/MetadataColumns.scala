package io.fermion.spark.read

import io.fermion.core.scan.{ColumnRequest, FileSplit}
import org.apache.spark.sql.connector.catalog.MetadataColumn
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/** The metadata columns of a Fermion table: `_rowaddr` and `_rowid` (computed by the core scan)
  * and `_metadata` (the file a row comes from, as Spark's file sources offer it). */
object MetadataColumns {
  val RowAddressName: String = ColumnRequest.RowAddressName
  val RowIdName: String = ColumnRequest.RowIdName
  val FileMetadataName = "_metadata"
  val BatchIdName: String = ColumnRequest.BatchIdName
  val IndexInBatchName: String = ColumnRequest.IndexInBatchName

  val FileMetadataType: StructType = StructType(Seq(
    StructField("file_path", StringType, nullable = false),
    StructField("file_name", StringType, nullable = false),
    StructField("file_size", LongType, nullable = false),
    StructField("file_block_start", LongType, nullable = false),
    StructField("file_block_length", LongType, nullable = false),
    StructField("file_modification_time", TimestampType, nullable = false)
  ))

  private def column(
      n: String,
      t: DataType,
      nullable: Boolean,
      doc: String,
      preserveOnReinsert: Boolean = false
  ): MetadataColumn = new MetadataColumn {
    override def name(): String = n
    override def dataType(): DataType = t
    override def isNullable: Boolean = nullable
    override def comment(): String = doc
    override def metadataInJSON(): String =
      if (!preserveOnReinsert) null
      else new MetadataBuilder().putBoolean(MetadataColumn.PRESERVE_ON_REINSERT, true).build().json
  }

  val all: Array[MetadataColumn] = Array(
    column(RowAddressName, LongType, nullable = false, "fragment id << 32 | row offset in the fragment"),
    // An updated row's new version keeps its id: Spark hands the old row's `_rowid` to the writer
    // with the new row (row-level operations) instead of nulling it.
    column(
      RowIdName,
      LongType,
      nullable = true,
      "stable row id (datasets created with stableRowIds)",
      preserveOnReinsert = true
    ),
    column(FileMetadataName, FileMetadataType, nullable = false, "the data file a row comes from"),
    column(BatchIdName, LongType, nullable = true, "the id of the row's batch (datasets written with batchKey)"),
    column(IndexInBatchName, IntegerType, nullable = true, "the row's 0-based position in its batch")
  )

  /** The core request of a read column, or None for `_metadata` (filled here, not by the core). A
    * column of `table` is its data, whatever its name. */
  def request(f: StructField, table: StructType): Option[ColumnRequest] =
    if (table.fieldNames.contains(f.name)) Some(ColumnRequest.Data(io.fermion.spark.SparkTypeMapping.toFermionField(f)))
    else request(f)

  /** Which read columns are `_metadata` (filled by the Spark reader, not by the core). */
  def fileMetadata(read: StructType, table: StructType): Array[Boolean] = read.fields.map(request(_, table).isEmpty)

  private def request(f: StructField): Option[ColumnRequest] = f.name match {
    case RowAddressName => Some(ColumnRequest.RowAddress)
    case RowIdName => Some(ColumnRequest.RowId)
    case BatchIdName => Some(ColumnRequest.BatchId)
    case IndexInBatchName => Some(ColumnRequest.IndexInBatch)
    case FileMetadataName if f.dataType.isInstanceOf[StructType] => None
    case _ => Some(ColumnRequest.Data(io.fermion.spark.SparkTypeMapping.toFermionField(f)))
  }

  /** `_metadata` of every row of a batch read from `split` (a pruned struct keeps only its fields). */
  def fileMetadata(t: StructType, split: FileSplit, rows: Int): ConstantColumnVector = {
    val v = new ConstantColumnVector(rows, t)
    val path = new org.apache.hadoop.fs.Path(split.file.path)
    t.fields.zipWithIndex.foreach { case (f, i) =>
      val child = new ConstantColumnVector(rows, f.dataType)
      f.name match {
        case "file_path" => child.setUtf8String(UTF8String.fromString(path.toUri.toString))
        case "file_name" => child.setUtf8String(UTF8String.fromString(path.getName))
        case "file_size" => child.setLong(split.file.length)
        case "file_block_start" => child.setLong(split.start)
        case "file_block_length" => child.setLong(split.length)
        case "file_modification_time" => child.setLong(split.file.modificationTime * 1000L)
        case _ => child.setNull()
      }
      v.setChild(i, child)
    }
    v
  }
}
