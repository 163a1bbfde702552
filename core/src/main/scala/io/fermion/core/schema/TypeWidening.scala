package io.fermion.core.schema

import java.util.Locale

import io.fermion.core.schema.FermionType._

/** Safe type widening, the part of Delta Lake's type widening Fermion reads: a column's type may
  * become a wider one without rewriting data. Files written before keep their narrower type and are
  * converted as they are read (`scan.WidenedVectors`); every value of the old type has exactly one
  * value of the new type (docs/table-format.md section 7).
  *
  *   - byte -> short -> int -> long (any step up);
  *   - float -> double;
  *   - decimal(p, s) -> decimal(p + k, s + j) with k >= j >= 0 (integer digits never shrink);
  *   - date -> timestamp_ntz (midnight of that day).
  */
object TypeWidening {

  /** Whether values stored as `from` may be read as `to` (equal types included). */
  def allowed(from: FermionType, to: FermionType): Boolean = (from, to) match {
    case (a, b) if a == b => true
    case (Int8, Int16 | Int32 | Int64) | (Int16, Int32 | Int64) | (Int32, Int64) => true
    case (Float32, Float64) => true
    case (Decimal(p1, s1), Decimal(p2, s2)) => s2 >= s1 && p2 - s2 >= p1 - s1
    case (Date32, Timestamp(false)) => true
    case _ => false
  }

  /** Whether `stored`'s statistics (min, max, bloom filter hashes) are in the domain of `wanted`
    * values, so that a filter on the wider type may be decided on them: integers are all compared
    * as 64-bit values and floats as doubles; decimals only when the unscaled values are the same
    * (same scale, both stored in 8 bytes). Dates (days) and rescaled decimals are not. */
  def sameStatsDomain(stored: FermionType, wanted: FermionType): Boolean = (stored, wanted) match {
    case (a, b) if a == b => true
    case (Int8 | Int16 | Int32 | Int64, Int8 | Int16 | Int32 | Int64) => true
    case (Float32, Float64) => true
    case (a: Decimal, b: Decimal) => a.scale == b.scale && a.storedWidth == 8 && b.storedWidth == 8
    case _ => false
  }

  /** Whether what a file stores as `stored` must be converted to read as `wanted`: some node has
    * another type, or a struct of `wanted` has a field `stored` lacks (added since; read null).
    * Children of structs are matched by name (case-insensitive), of lists and maps by position. */
  def differs(stored: FermionField, wanted: FermionField): Boolean =
    stored.dataType != wanted.dataType || (stored.dataType match {
      case Struct => wanted.children.exists(w => storedChild(stored, w).forall(s => differs(s, w)))
      case _ => stored.children.zip(wanted.children).exists { case (s, w) => differs(s, w) }
    })

  /** The child of struct `stored` that `wanted` (a child of the wanted struct) reads, if any. */
  private def storedChild(stored: FermionField, wanted: FermionField): Option[FermionField] =
    stored.children.find(_.name.equalsIgnoreCase(wanted.name))

  /** Whether two schemas of one dataset give some field id two different types: a schema that
    * widened the other. */
  def widened(before: FermionSchema, after: FermionSchema): Boolean = {
    val types = scala.collection.mutable.HashMap.empty[Int, FermionType]
    def collect(f: FermionField): Unit = { types(f.fieldId) = f.dataType; f.children.foreach(collect) }
    before.fields.foreach(collect)
    def changed(f: FermionField): Boolean =
      types.get(f.fieldId).exists(_ != f.dataType) || f.children.exists(changed)
    after.fields.exists(changed)
  }

  /** `schema` with the node at `path` (top-level name, then struct field names; `element` for a
    * list's elements, `value` for a map's values; matched case-insensitively) changed to `to`.
    * Fails with an [[IllegalArgumentException]] naming the column and both types unless the change
    * is a widening of a leaf (or no change). */
  def change(schema: FermionSchema, path: Seq[String], to: FermionType): FermionSchema = {
    require(path.nonEmpty, "a column to change")
    val shown = path.mkString(".")
    def fail(why: String): Nothing = throw new IllegalArgumentException(s"Cannot change the type of `$shown`: $why")
    def go(f: FermionField, rest: Seq[String]): FermionField =
      if (rest.isEmpty) {
        if (isNested(f.dataType) || isNested(to))
          fail(s"it is ${f.dataType} and the new type is $to; only types of leaf columns can change")
        if (!allowed(f.dataType, to))
          fail(
            s"${f.dataType} cannot be widened to $to (allowed: byte -> short -> int -> long, float -> double, " +
              "decimal(p, s) -> decimal(p + k, s + j) with k >= j >= 0, date -> timestamp_ntz)"
          )
        f.copy(dataType = to)
      } else {
        val name = rest.head.toLowerCase(Locale.ROOT)
        val i = f.dataType match {
          case Struct => f.children.indexWhere(_.name.toLowerCase(Locale.ROOT) == name)
          case List if name == "element" => 0
          case Map if name == "value" => 1
          case Map if name == "key" => fail("map keys cannot change type")
          case _ => -1
        }
        if (i < 0) fail(s"${f.name} (${f.dataType}) has no field `${rest.head}`")
        f.copy(children = f.children.updated(i, go(f.children(i), rest.tail)))
      }
    val i = schema.indexOf(path.head).getOrElse(fail("no such column"))
    FermionSchema(schema.fields.updated(i, go(schema.fields(i), path.tail)))
  }

  /** The schema an append with `mergeSchema` leaves: `base` with the types of same-named fields of
    * `data` where they are wider, and the fields `data` has and `base` lacks added after the others
    * (top level and in structs, new fields nullable). A nullable top-level column `data` lacks
    * stays (its rows read null there); a struct field it lacks, or a NOT NULL column, fails. `data` carries `base`'s field ids and fresh
    * ones for new fields (`dataset.SchemaIds.assignFrom`). A field `data` has with a type that is
    * neither the same, wider nor narrower fails, naming the column and both types. */
  def merge(base: FermionSchema, data: FermionSchema): FermionSchema = {
    def fail(path: String, b: FermionType, d: FermionType): Nothing =
      throw new IllegalArgumentException(
        s"Cannot merge the schema of column `$path`: it is $b in the dataset and $d in the data, " +
          "and neither widens to the other (byte -> short -> int -> long, float -> double, decimal(p, s) -> " +
          "decimal(p + k, s + j) with k >= j >= 0, date -> timestamp_ntz)"
      )
    def go(b: FermionField, d: FermionField, path: String): FermionField = {
      val t =
        if (b.dataType == d.dataType || allowed(d.dataType, b.dataType)) b.dataType
        else if (allowed(b.dataType, d.dataType)) d.dataType
        else fail(path, b.dataType, d.dataType)
      val kids = b.dataType match {
        case Struct =>
          // A file's struct must have every field the dataset's has (readers find them by name).
          val kept = b.children.map(c =>
            d.children.find(_.name.equalsIgnoreCase(c.name)).map(go(c, _, s"$path.${c.name}")).getOrElse(
              throw new IllegalArgumentException(
                s"Cannot merge the schema: the data lacks struct field `$path.${c.name}`"
              )
            )
          )
          kept ++ d.children.filterNot(c => b.children.exists(_.name.equalsIgnoreCase(c.name)))
            .map(nullableTree)
        case List | Map =>
          if (b.children.size != d.children.size) fail(path, b.dataType, d.dataType)
          b.children.zip(d.children).zipWithIndex.map { case ((x, y), k) =>
            if (b.dataType == Map && k == 0 && x.dataType != y.dataType) fail(s"$path.key", x.dataType, y.dataType)
            go(x, y, s"$path.${if (b.dataType == List) "element" else if (k == 0) "key" else "value"}")
          }
        case _ => b.children
      }
      b.copy(dataType = t, children = kids)
    }
    val kept = base.fields.map { f =>
      data.indexOf(f.name).map(i => go(f, data.fields(i), f.name)).getOrElse {
        // A column the data lacks reads null in its rows: only where the dataset allows nulls.
        if (!f.nullable)
          throw new IllegalArgumentException(
            s"Cannot merge the schema: the data lacks column `${f.name}`, which is NOT NULL"
          )
        f
      }
    }
    FermionSchema(kept ++ data.fields.filter(f => base.indexOf(f.name).isEmpty).map(nullableTree))
  }

  /** A new field: nullable (rows written before read null there); its children as they are. */
  private def nullableTree(f: FermionField): FermionField = f.copy(nullable = true)
}
