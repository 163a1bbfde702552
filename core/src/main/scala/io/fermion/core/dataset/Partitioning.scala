package io.fermion.core.dataset

import java.nio.charset.StandardCharsets
import java.util.Locale

import io.fermion.core.expr.{ConstantFilter, FilterExpr, FilterValue}
import io.fermion.core.schema.{FermionField, FermionSchema, FermionType}

/** The rules of partitioned datasets (docs/table-format.md, 6.7): which columns may partition a
  * dataset, where their values live (in the manifest, one tuple per fragment, never in data
  * files), and how a filter over partition columns is evaluated on a fragment's values. */
object Partitioning {

  /** The schema fields of `spec` (top-level field ids), in spec order. */
  def fields(schema: FermionSchema, spec: IndexedSeq[Int]): IndexedSeq[FermionField] =
    spec.map(id =>
      schema.fields.find(_.fieldId == id).getOrElse(
        throw new IllegalStateException(s"partition field id $id is not a top-level field of the schema")
      )
    )

  /** Types whose values compare exactly (no floating point, no decimals beyond 18 digits, nothing
    * nested, no binary): the values a partition column may hold. */
  def supportedType(t: FermionType): Boolean = t match {
    case FermionType.Bool | FermionType.Int8 | FermionType.Int16 | FermionType.Int32 | FermionType.Int64 |
        FermionType.Date32 | FermionType.Utf8 | FermionType.Timestamp(_) =>
      true
    case d: FermionType.Decimal => d.precision <= 18
    case _ => false
  }

  /** The spec of partition columns `names` (matched case-insensitively) in `schema`; fails naming
    * the column for an unknown, repeated or unsupported one, and when no column would be left for
    * the data files. */
  def specOf(schema: FermionSchema, names: Seq[String], dataset: String): IndexedSeq[Int] = {
    val lower = names.map(_.toLowerCase(Locale.ROOT))
    lower.diff(lower.distinct).headOption.foreach { n =>
      throw new IllegalArgumentException(s"partition column `$n` is given twice for $dataset")
    }
    val ids = names.map { n =>
      val f = schema.indexOf(n).map(schema.fields).getOrElse(
        throw new IllegalArgumentException(
          s"partition column `$n` is not a column of $dataset (columns: ${schema.fields.map(_.name).mkString(", ")})"
        )
      )
      if (!supportedType(f.dataType))
        throw new IllegalArgumentException(
          s"cannot partition $dataset by `${f.name}` of type ${f.dataType}: partition columns are booleans, integers, " +
            "dates, timestamps, strings or decimals of up to 18 digits"
        )
      f.fieldId
    }.toIndexedSeq
    if (ids.nonEmpty && ids.size == schema.fields.size)
      throw new IllegalArgumentException(
        s"cannot partition $dataset by every column (${names.mkString(", ")}): data files need at least one other column"
      )
    ids
  }

  /** The top-level fields stored in data files: all but the partition columns. */
  def dataSchema(schema: FermionSchema, spec: IndexedSeq[Int]): FermionSchema =
    if (spec.isEmpty) schema else FermionSchema(schema.fields.filterNot(f => spec.contains(f.fieldId)))

  /** A filter's view of a fragment: its partition columns (by lower-case name) are constants, every
    * other column varies. */
  def byName(
      fields: IndexedSeq[FermionField],
      values: IndexedSeq[Option[FilterValue]]
  ): String => ConstantFilter.Column = {
    val byName = fields.map(_.name.toLowerCase(Locale.ROOT)).zip(values).toMap
    c => byName.get(c.toLowerCase(Locale.ROOT)).map(ConstantFilter.Constant).getOrElse(ConstantFilter.Varies)
  }

  /** The same for filters whose columns are field ids written in decimal (how transactions keep
    * the partitions an operation replaces, so that renaming a column changes nothing). */
  def byId(spec: IndexedSeq[Int], values: IndexedSeq[Option[FilterValue]]): String => ConstantFilter.Column = {
    val byId = spec.map(_.toString).zip(values).toMap
    c => byId.get(c).map(ConstantFilter.Constant).getOrElse(ConstantFilter.Varies)
  }

  /** `e` (columns named as in `schema`) with columns named by field id; None if a column is not a
    * top-level field. */
  def toIds(e: FilterExpr, schema: FermionSchema): Option[FilterExpr] = {
    val unknown = FilterExpr.columns(e).filter(schema.indexOf(_).isEmpty)
    if (unknown.nonEmpty) None
    else Some(FilterExpr.mapColumns(e, c => schema.fields(schema.indexOf(c).get).fieldId.toString))
  }

  /** `e` with field-id columns named as in `schema` (ids it lacks stay `#<id>`). */
  def toNames(e: FilterExpr, schema: FermionSchema): FilterExpr =
    FilterExpr.mapColumns(
      e,
      c => c.toIntOption.flatMap(id => schema.fields.find(_.fieldId == id)).map(_.name).getOrElse(s"#$c")
    )

  /** The filter (over columns named by field id) that selects exactly the partitions `tuples`
    * (values in spec order): an OR of one AND per tuple, built balanced so that thousands of
    * partitions stay shallow. */
  def anyOf(spec: IndexedSeq[Int], tuples: Seq[IndexedSeq[Option[FilterValue]]]): FilterExpr = {
    def one(values: IndexedSeq[Option[FilterValue]]): FilterExpr =
      balanced(
        spec.indices.map { i =>
          values(i) match {
            case None => FilterExpr.IsNull(spec(i).toString)
            case Some(v) => FilterExpr.Compare(spec(i).toString, FilterExpr.Eq, v)
          }
        },
        FilterExpr.And
      )
    balanced(tuples.distinct.map(one).toIndexedSeq, FilterExpr.Or)
  }

  private def balanced(parts: IndexedSeq[FilterExpr], join: (FilterExpr, FilterExpr) => FilterExpr): FilterExpr =
    if (parts.size == 1) parts.head
    else {
      val (l, r) = parts.splitAt(parts.size / 2)
      join(balanced(l, join), balanced(r, join))
    }

  /** A value as people read it (`p=2026-01-31`), for descriptions and error messages. */
  def show(field: FermionField, value: Option[FilterValue]): String = s"${field.name}=${text(field.dataType, value)}"

  def text(t: FermionType, value: Option[FilterValue]): String = (t, value) match {
    case (_, None) => "null"
    case (FermionType.Bool, Some(FilterValue.Integral(v))) => (v != 0).toString
    case (FermionType.Date32, Some(FilterValue.Integral(v))) => java.time.LocalDate.ofEpochDay(v).toString
    case (FermionType.Timestamp(utc), Some(FilterValue.Integral(v))) =>
      val i = java.time.Instant.EPOCH.plus(v, java.time.temporal.ChronoUnit.MICROS)
      if (utc) i.toString else java.time.LocalDateTime.ofInstant(i, java.time.ZoneOffset.UTC).toString
    case (d: FermionType.Decimal, Some(FilterValue.Integral(v))) =>
      java.math.BigDecimal.valueOf(v, d.scale).toPlainString
    case (_, Some(FilterValue.Integral(v))) => v.toString
    case (_, Some(FilterValue.Floating(v))) => v.toString
    case (_, Some(FilterValue.Bytes(b))) => new String(b, StandardCharsets.UTF_8)
  }
}
