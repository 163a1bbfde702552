package io.fermion.core.dataset

import java.util.Locale

import io.fermion.core.schema.{FermionField, FermionSchema, FermionType, TypeWidening}

/** Schema changes that rewrite no data, committed together as one version
  * ([[Operation.Project]]): new nullable columns (existing rows read null), dropped columns (their
  * data stays in the files, unreachable, until compaction), renamed top-level columns (files are
  * matched by field id, so the data follows the new name), widened column types (files keep the
  * old type and are read converted).
  * {{{
  * dataset.updateSchema()
  *   .addColumn(FermionField("score", -1, FermionType.Float64, nullable = true))
  *   .renameColumn("ts", "event_time")
  *   .changeColumnType("id", FermionType.Int64)
  *   .dropColumns("debug")
  *   .commit()
  * }}}
  */
final class SchemaUpdate private[dataset] (dataset: FermionDataset) {
  private var changes = Vector.empty[Manifest => FermionSchema => FermionSchema]
  private var described = Vector.empty[String]

  /** Adds a top-level column (nested fields included) at the end; field ids given are ignored and
    * fresh ones assigned. The column is nullable whatever `field` says. */
  def addColumn(field: FermionField): SchemaUpdate = {
    changes :+= { (m: Manifest) => (s: FermionSchema) =>
      if (s.indexOf(field.name).nonEmpty) fail(s"Cannot add column `${field.name}`: it already has one")
      val fresh = SchemaIds.assignFrom(
        s,
        FermionSchema(IndexedSeq(field.copy(nullable = true))),
        math.max(m.lastFieldId, SchemaIds.maxId(s))
      )
      FermionSchema(s.fields ++ fresh.fields)
    }
    described :+= s"add column ${field.name}"
    this
  }

  def dropColumns(names: String*): SchemaUpdate = {
    changes :+= { (m: Manifest) => (s: FermionSchema) =>
      val drop = names.map(_.toLowerCase(Locale.ROOT)).toSet
      val missing = drop -- s.fields.map(_.name.toLowerCase(Locale.ROOT))
      if (missing.nonEmpty) fail(s"Cannot drop ${missing.toSeq.sorted.mkString(", ")}: no such column")
      s.fields.find(f => drop.contains(f.name.toLowerCase(Locale.ROOT)) && m.partitionSpec.contains(f.fieldId))
        .foreach(f => fail(s"Cannot drop `${f.name}`: the dataset is partitioned by it"))
      val kept = s.fields.filterNot(f => drop.contains(f.name.toLowerCase(Locale.ROOT)))
      if (kept.isEmpty) fail("Cannot drop every column")
      if (kept.forall(f => m.partitionSpec.contains(f.fieldId)))
        fail("Cannot drop every column that is not a partition column")
      FermionSchema(kept)
    }
    described :+= s"drop columns ${names.mkString(", ")}"
    this
  }

  def renameColumn(from: String, to: String): SchemaUpdate = {
    changes :+= { (_: Manifest) => (s: FermionSchema) =>
      val i = s.indexOf(from).getOrElse(fail(s"Cannot rename `$from`: no such column"))
      if (s.indexOf(to).exists(_ != i)) fail(s"Cannot rename `$from` to `$to`: `$to` exists")
      FermionSchema(s.fields.updated(i, s.fields(i).copy(name = to)))
    }
    described :+= s"rename column $from to $to"
    this
  }

  /** Widens the type of a column ([[TypeWidening]]: byte -> short -> int -> long, float -> double,
    * decimal precision up with integer digits kept, date -> timestamp_ntz). `path` is a top-level
    * column, then struct field names (`element` for a list's elements, `value` for a map's values).
    * No data is rewritten: files written before keep the old type and are read widened. Any other
    * change fails, naming the column and both types. */
  def changeColumnType(path: Seq[String], to: FermionType): SchemaUpdate = {
    changes :+= { (m: Manifest) => (s: FermionSchema) =>
      s.indexOf(path.head).map(s.fields).filter(f => m.partitionSpec.contains(f.fieldId)).foreach { f =>
        fail(s"Cannot change the type of `${f.name}`: the dataset is partitioned by it")
      }
      try TypeWidening.change(s, path, to)
      catch { case e: IllegalArgumentException => fail(e.getMessage) }
    }
    described :+= s"change type of ${path.mkString(".")} to $to"
    this
  }

  /** [[changeColumnType]] of a top-level column. */
  def changeColumnType(name: String, to: FermionType): SchemaUpdate = changeColumnType(Seq(name), to)

  private def fail(why: String): Nothing =
    throw new IllegalArgumentException(s"$why (Fermion dataset at ${dataset.name})")

  /** Applies the changes to the latest version and commits them; returns the new manifest. A
    * concurrent schema change or overwrite makes it fail with [[FermionCommitConflictException]]. */
  def commit(): Manifest = {
    require(changes.nonEmpty, "no schema change to commit")
    val base =
      dataset.latest().getOrElse(throw new FermionDatasetNotFoundException(dataset.name, "no dataset to change"))
    val schema = changes.foldLeft(base.schema)((s, change) => change(base)(s))
    dataset.commit(base.version, Operation.Project(schema, described.mkString("; ")))
  }
}
