package io.fermion.core.scan

import io.fermion.core.schema.{FermionField, FermionType}

/** Dotted column paths (`a`, `a.b.c`, `tags.element`, `m.value.x`) as pruned [[ColumnRequest]]s:
  * each path keeps the fields on it; paths into the same top-level column are merged. A list's
  * element is `element`, a map's children `key` and `value`. Names match case-insensitively. */
private[scan] object ColumnPaths {
  def requests(snapshot: Snapshot, paths: Seq[String]): IndexedSeq[ColumnRequest] = {
    val schema = snapshot.schema.getOrElse(
      throw new io.fermion.core.dataset.FermionDatasetNotFoundException(
        snapshot.root,
        "it holds no Fermion dataset or data files"
      )
    )
    val trees = paths.map { p =>
      val parts = p.split('.').toList
      val top = schema.indexOf(parts.head).map(schema.fields).getOrElse(
        throw new IllegalArgumentException(
          s"No column `${parts.head}` in ${snapshot.root} (columns: ${schema.fields.map(_.name).mkString(", ")})"
        )
      )
      prune(top, parts.tail, p)
    }
    // One request per top-level column, in the order first asked for.
    val order = trees.map(_.name.toLowerCase(java.util.Locale.ROOT)).distinct
    order.map { n =>
      ColumnRequest.Data(trees.filter(_.name.equalsIgnoreCase(n)).reduce(merge))
    }.toIndexedSeq
  }

  private def prune(f: FermionField, rest: List[String], path: String): FermionField = rest match {
    case Nil => f
    case name :: tail =>
      f.dataType match {
        case FermionType.Struct =>
          val child = f.children.find(_.name.equalsIgnoreCase(name)).getOrElse(
            throw new IllegalArgumentException(s"No field `$name` in `${f.name}` (path `$path`)")
          )
          f.copy(children = IndexedSeq(prune(child, tail, path)))
        case FermionType.List | FermionType.Map =>
          val i = f.children.indexWhere(_.name.equalsIgnoreCase(name))
          if (i < 0) throw new IllegalArgumentException(
            s"`${f.name}` has children ${f.children.map(_.name).mkString(", ")}, not `$name` (path `$path`)"
          )
          f.copy(children = f.children.updated(i, prune(f.children(i), tail, path)))
        case _ => throw new IllegalArgumentException(s"`${f.name}` has no fields (path `$path`)")
      }
  }

  /** Two prunings of the same field: the union of their struct children, in stored order. */
  private def merge(a: FermionField, b: FermionField): FermionField = a.dataType match {
    case FermionType.Struct =>
      val names = (a.children ++ b.children).map(_.name.toLowerCase(java.util.Locale.ROOT)).distinct
      a.copy(children = names.map { n =>
        (a.children.find(_.name.equalsIgnoreCase(n)), b.children.find(_.name.equalsIgnoreCase(n))) match {
          case (Some(x), Some(y)) => merge(x, y)
          case (Some(x), None) => x
          case (None, Some(y)) => y
          case _ => throw new IllegalStateException(n)
        }
      })
    case FermionType.List | FermionType.Map =>
      a.copy(children = a.children.zip(b.children).map { case (x, y) => merge(x, y) })
    case _ => a
  }
}
