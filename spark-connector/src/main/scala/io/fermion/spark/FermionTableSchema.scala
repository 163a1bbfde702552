package io.fermion.spark

import io.fermion.core.scan.Snapshot
import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types._

/** The Spark schema of a table: the dataset version's schema, or the first file's for a plain
  * directory of Fermion files. */
object FermionTableSchema {

  /** The session's Hadoop configuration itself, not a copy: callers read it and never change it.
    * Copying it (hundreds of entries) on every call cost 8 % of planning a TPC-H query (Q2 at sf1,
    * 9 catalog loads and scans); what leaves the driver is copied once, by
    * [[SerializableHadoopConf.broadcast]]. */
  def hadoopConf(): Configuration = SparkSession.active.sparkContext.hadoopConfiguration

  /** How loose files' `k=v` partition columns are typed: as Spark's file sources type them
    * (`spark.sql.sources.partitionColumnTypeInference.enabled`, the session time zone). */
  def loosePartitioning(): io.fermion.core.scan.LoosePartitioning = {
    val conf = org.apache.spark.sql.internal.SQLConf.get
    io.fermion.core.scan.LoosePartitioning(conf.partitionColumnTypeInferenceEnabled, conf.sessionLocalTimeZone)
  }

  def of(snapshot: Snapshot): Option[StructType] = snapshot.schema.map(SparkTypeMapping.toSpark)

  def infer(path: String, conf: Configuration): Option[StructType] = of(Snapshot.open(path, conf))

  /** A catalog table's schema: the dataset's columns and types win (schema changes may have been
    * made through the dataset API), with what the catalog declared for the columns it knows: their
    * nullability (a column declared nullable stays nullable, whatever the rows written so far),
    * their comments and other field metadata, and CHAR(n) / VARCHAR(n) where the dataset stores a
    * string (so Spark checks lengths on write and pads on read, as for Parquet tables). */
  def withDeclared(dataset: StructType, declared: StructType): StructType = {
    val nullable = withDeclaredNullability(dataset, declared)
    StructType(nullable.fields.map { f =>
      declared.fields.find(_.name.equalsIgnoreCase(f.name)) match {
        case Some(d) =>
          val dataType = (f.dataType, d.dataType) match {
            case (StringType, c @ (_: CharType | _: VarcharType)) => c
            case _ => f.dataType
          }
          f.copy(dataType = dataType, metadata = new MetadataBuilder().withMetadata(d.metadata).build())
        case None => f
      }
    })
  }

  /** Same column names and types, in order, nullability aside; CHAR(n) / VARCHAR(n) count as the
    * strings they are stored as. */
  def sameColumns(dataset: StructType, declared: StructType): Boolean = {
    val plain = org.apache.spark.sql.catalyst.util.CharVarcharUtils.replaceCharVarcharWithStringInSchema(declared)
    dataset.length == plain.length && dataset.fields.zip(plain.fields).forall { case (a, b) =>
      a.name.equalsIgnoreCase(b.name) && io.fermion.spark.write.FermionWriteBuilder.sameIgnoringNullability(
        a.dataType,
        b.dataType
      )
    }
  }

  /** `data` with every field, element and value nullable where `declared` says so, matched by name
    * (case-insensitively) within structs. */
  def withDeclaredNullability(data: StructType, declared: StructType): StructType = {
    def widen(d: DataType, t: DataType): DataType = (d, t) match {
      case (ds: StructType, ts: StructType) =>
        StructType(ds.fields.map { f =>
          ts.fields.find(_.name.equalsIgnoreCase(f.name)) match {
            case Some(g) => f.copy(dataType = widen(f.dataType, g.dataType), nullable = f.nullable || g.nullable)
            case None => f
          }
        })
      case (da: ArrayType, ta: ArrayType) =>
        ArrayType(widen(da.elementType, ta.elementType), da.containsNull || ta.containsNull)
      case (dm: MapType, tm: MapType) =>
        MapType(
          widen(dm.keyType, tm.keyType),
          widen(dm.valueType, tm.valueType),
          dm.valueContainsNull || tm.valueContainsNull
        )
      case _ => d
    }
    widen(data, declared).asInstanceOf[StructType]
  }
}
