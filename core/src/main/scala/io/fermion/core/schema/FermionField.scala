package io.fermion.core.schema

import io.fermion.core.layout.StreamType

/** One node of the schema tree. `fieldId` is stable across schema changes (the table layer keys
  * data files by it); children are ordered as Arrow orders them. */
final case class FermionField(
    name: String,
    fieldId: Int,
    dataType: FermionType,
    nullable: Boolean,
    children: IndexedSeq[FermionField] = IndexedSeq.empty
) {

  /** This node's own streams: VALIDITY, then OFFSETS for lists, maps and variable-width values,
    * then DATA for leaves. */
  def ownStreamTypes: IndexedSeq[Int] = dataType match {
    case FermionType.Struct => IndexedSeq(StreamType.Validity)
    case FermionType.List | FermionType.Map => IndexedSeq(StreamType.Validity, StreamType.Offsets)
    case t if FermionType.isVariableWidth(t) => IndexedSeq(StreamType.Validity, StreamType.Offsets, StreamType.Data)
    case _ => IndexedSeq(StreamType.Validity, StreamType.Data)
  }

  /** The stream types of this column, depth first: each node's own streams,
    * then its children's in order. A map's children are its key and value. */
  def streamTypes: IndexedSeq[Int] = ownStreamTypes ++ children.flatMap(_.streamTypes)

  /** Number of streams of this subtree (how far a reader skips past a pruned child). */
  lazy val streamCount: Int = ownStreamTypes.size + children.map(_.streamCount).sum
}

/** The schema of a file: its top-level columns, in CIT order. */
final case class FermionSchema(fields: IndexedSeq[FermionField]) {
  private lazy val byLowerName: Map[String, Int] =
    fields.zipWithIndex.map { case (f, i) => f.name.toLowerCase(java.util.Locale.ROOT) -> i }.toMap

  /** The column index of `name`, matched case-insensitively as Spark resolves names. */
  def indexOf(name: String): Option[Int] = byLowerName.get(name.toLowerCase(java.util.Locale.ROOT))
  def size: Int = fields.size
}
