package io.fermion.core.encoding

import io.fermion.core.layout.PageEncoding

/** The page encodings a writer may choose from; PLAIN is always allowed (it is the fallback when
  * no other allowed encoding applies to a page). */
final private[core] case class EncodingSet(ids: Set[Int]) {
  def allows(id: Int): Boolean = id == PageEncoding.Plain || ids.contains(id)
  override def toString: String = (ids + PageEncoding.Plain).toSeq.sorted.map(PageEncoding.name).mkString(",")
}

private[core] object EncodingSet {
  val All: EncodingSet = EncodingSet(PageEncoding.all.toSet)
  val PlainOnly: EncodingSet = EncodingSet(Set(PageEncoding.Plain))

  /** "all", "plain", or a comma-separated list of encoding names. */
  def parse(value: String): EncodingSet = value.trim.toLowerCase(java.util.Locale.ROOT) match {
    case "all" | "auto" | "" => All
    case v => EncodingSet(v.split(",").map(_.trim).filter(_.nonEmpty).map(PageEncoding.parse).toSet)
  }
}
