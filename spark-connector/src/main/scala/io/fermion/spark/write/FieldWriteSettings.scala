package io.fermion.spark.write

import io.fermion.core.options.OptionRegistry
import io.fermion.core.write.{ColumnOverrides, FermionFileWriter, WriterOptions}
import io.fermion.spark.SparkTypeMapping
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}

/** Per-column write settings carried in a DataFrame's field metadata (`fermion.compression`,
  * `fermion.compressionLevel`, `fermion.encodings`, `fermion.pageSize`, `fermion.pageRows`), merged with the writer's
  * `column.<path>.<setting>` options, which win where both set the same thing. */
object FieldWriteSettings {
  val MetadataPrefix = "fermion."

  /** The writer options with the schema's metadata settings added, checked against the schema. */
  def resolve(schema: StructType, options: WriterOptions): WriterOptions = {
    val fromMetadata = collect(schema, "")
    val paths = options.columns.keySet.map(_.toLowerCase(java.util.Locale.ROOT)) ++ fromMetadata.keySet
    val merged = paths.map { p =>
      val explicit =
        options.columns.collectFirst { case (k, v) if k.equalsIgnoreCase(p) => v }.getOrElse(ColumnOverrides())
      p -> explicit.orElse(fromMetadata.getOrElse(p, ColumnOverrides()))
    }.toMap
    val resolved = options.copy(columns = merged)
    FermionFileWriter.checkColumnPaths(SparkTypeMapping.toFermion(schema), resolved)
    resolved
  }

  private def collect(t: DataType, prefix: String): Map[String, ColumnOverrides] = t match {
    case s: StructType =>
      s.fields.flatMap { f =>
        val path = if (prefix.isEmpty) f.name else s"$prefix.${f.name}"
        val settings = OptionRegistry.all.filter(_.perColumn).map(_.key).flatMap { k =>
          val key = MetadataPrefix + k
          if (f.metadata.contains(key)) Some(k -> metadataValue(f.metadata, key)) else None
        }.toMap
        val own = if (settings.isEmpty) Map.empty[String, ColumnOverrides]
        else Map(path.toLowerCase(java.util.Locale.ROOT) -> WriterOptions.parseColumnOverrides(
          settings,
          k => s"field metadata '$MetadataPrefix$k' of `$path`"
        ))
        own ++ collect(f.dataType, path)
      }.toMap
    case a: ArrayType => collect(a.elementType, s"$prefix.element")
    case m: MapType => collect(m.keyType, s"$prefix.key") ++ collect(m.valueType, s"$prefix.value")
    case _ => Map.empty
  }

  /** Metadata values may be strings or numbers. */
  private def metadataValue(m: org.apache.spark.sql.types.Metadata, key: String): String =
    try m.getString(key)
    catch {
      case _: ClassCastException =>
        try m.getLong(key).toString
        catch { case _: ClassCastException => m.getDouble(key).toString }
    }
}
