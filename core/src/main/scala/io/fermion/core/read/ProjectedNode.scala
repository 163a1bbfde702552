package io.fermion.core.read

import java.util.Locale

import io.fermion.core.schema.{FermionField, FermionType, TypeWidening, UnsupportedColumnTypeException}

/** The part of one column a reader decodes: `field` is the file's node with only the selected
  * children, `firstStream` the index of the node's first stream in the column's CMB. Pruned
  * children are skipped by stream count, so selecting `a.b.c` touches only the streams of `a`, `b`
  * and `c` (the validity of each ancestor and the leaf's own streams). */
final private[core] class ProjectedNode private (
    val field: FermionField,
    val firstStream: Int,
    val children: IndexedSeq[ProjectedNode],
    val elementsDeferred: Boolean = false
) {
  def streamOf(ownIndex: Int): Int = firstStream + ownIndex

  /** Every stream this projection reads, in stream order. */
  def streams: IndexedSeq[Int] =
    field.ownStreamTypes.indices.map(streamOf) ++ (if (elementsDeferred) Nil else children.flatMap(_.streams))

  /** The same projection of a list or map without its elements: only VALIDITY and OFFSETS are
    * read, and the decoded vector's element vector stays empty. What `size(col)` and null checks
    * need, and nothing else (the offsets carry the lists' lengths). */
  def withoutElements: ProjectedNode = {
    require(
      field.dataType == FermionType.List || field.dataType == FermionType.Map,
      s"${field.name} is not a list or map"
    )
    new ProjectedNode(field, firstStream, children, elementsDeferred = true)
  }
}

private[core] object ProjectedNode {

  /** The whole column. */
  def full(field: FermionField): ProjectedNode = build(field, 0)

  /** The column restricted to `requested`, a tree of the same shape naming the struct fields to
    * keep (matched case-insensitively). A struct with no requested children keeps its first one so
    * that its validity has a vector to travel with. Types of the kept leaves must match; with
    * `widening` (a dataset's files), a file's type may also be one the requested type widens
    * ([[TypeWidening]]) and a requested struct field may be missing: the node keeps the file's
    * types and fields, and the reader converts what it decodes. */
  def prune(field: FermionField, requested: FermionField, widening: Boolean = false): ProjectedNode = {
    def go(f: FermionField, r: FermionField, first: Int): ProjectedNode = {
      if (f.dataType != r.dataType && !(widening && TypeWidening.allowed(f.dataType, r.dataType)))
        throw new UnsupportedColumnTypeException(
          r.name,
          r.dataType.toString,
          s"the file stores this field as ${f.dataType}"
        )
      f.dataType match {
        case FermionType.Struct =>
          val wanted = r.children.map(c => c.name.toLowerCase(Locale.ROOT) -> c).toMap
          var next = first + f.ownStreamTypes.size
          val kept = f.children.flatMap { c =>
            val start = next
            next += c.streamCount
            wanted.get(c.name.toLowerCase(Locale.ROOT)).map(rc => go(c, rc, start))
          }
          val missing = wanted.keySet -- f.children.map(_.name.toLowerCase(Locale.ROOT))
          // A dataset's struct may have gained fields since the file was written (mergeSchema):
          // they read null there (the reader adds them).
          if (missing.nonEmpty && !widening)
            throw new UnsupportedColumnTypeException(
              s"${r.name}.${missing.head}",
              "?",
              "the file has no such struct field"
            )
          val keptChildren =
            if (kept.nonEmpty || f.children.isEmpty) kept
            else IndexedSeq(build(f.children.head, first + f.ownStreamTypes.size))
          new ProjectedNode(f.copy(children = keptChildren.map(_.field)), first, keptChildren)
        case FermionType.List | FermionType.Map =>
          var next = first + f.ownStreamTypes.size
          val kids = f.children.zip(r.children).map { case (c, rc) =>
            val start = next; next += c.streamCount; go(c, rc, start)
          }
          new ProjectedNode(f.copy(children = kids.map(_.field)), first, kids)
        case _ => new ProjectedNode(f, first, IndexedSeq.empty)
      }
    }
    go(field, requested, 0)
  }

  private def build(f: FermionField, first: Int): ProjectedNode = {
    var next = first + f.ownStreamTypes.size
    val kids = f.children.map { c =>
      val start = next; next += c.streamCount; build(c, start)
    }
    new ProjectedNode(f, first, kids)
  }
}
