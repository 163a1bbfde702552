package io.fermion.core.dataset

import io.fermion.core.schema.{FermionField, FermionSchema}

/** Field ids across a dataset's life: data appended to a dataset is written with the dataset's
  * ids (matched by name), new columns take ids after the largest, and a renamed column keeps its
  * id, so files are matched to the schema by id and never by name. */
object SchemaIds {

  /** `data`'s fields (written with fresh ids) carrying the ids of the same-named fields of `base`;
    * a field `base` lacks keeps a fresh id after `base`'s largest. Shapes of matched fields agree
    * (the append check guarantees it). */
  def assignFrom(base: FermionSchema, data: FermionSchema, lastUsed: Int = -1): FermionSchema = {
    var next = math.max(maxId(base), lastUsed) + 1
    def fresh(f: FermionField): FermionField = {
      val id = next; next += 1; f.copy(fieldId = id, children = f.children.map(fresh))
    }
    def copyIds(d: FermionField, b: FermionField): FermionField = {
      val kids = b.dataType match {
        case io.fermion.core.schema.FermionType.Struct =>
          d.children.map(c => b.children.find(_.name.equalsIgnoreCase(c.name)).map(copyIds(c, _)).getOrElse(fresh(c)))
        case _ => d.children.zip(b.children).map { case (x, y) => copyIds(x, y) }
      }
      d.copy(fieldId = b.fieldId, children = kids)
    }
    FermionSchema(data.fields.map(f =>
      base.fields.find(_.name.equalsIgnoreCase(f.name)).map(copyIds(f, _)).getOrElse(fresh(f))
    ))
  }

  /** `base` with each field nullable where `data`'s same-id field is: a dataset's schema must not
    * promise NOT NULL once any file may hold nulls there. */
  def relaxNullability(base: FermionSchema, data: FermionSchema): FermionSchema = {
    val nullableIds = scala.collection.mutable.Set.empty[Int]
    def collect(f: FermionField): Unit = { if (f.nullable) nullableIds += f.fieldId; f.children.foreach(collect) }
    data.fields.foreach(collect)
    def relax(f: FermionField): FermionField =
      f.copy(nullable = f.nullable || nullableIds.contains(f.fieldId), children = f.children.map(relax))
    FermionSchema(base.fields.map(relax))
  }

  def maxId(s: FermionSchema): Int = {
    def walk(f: FermionField): Int = (f.fieldId +: f.children.map(walk)).max
    if (s.fields.isEmpty) -1 else s.fields.map(walk).max
  }
}
