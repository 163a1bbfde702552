package io.fermion.core.dataset

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets

import io.fermion.core.schema.{FermionSchema, SchemaCodec}

/** What one commit did (docs/table-format.md, "Transactions"). Written to `_transactions/` before
  * the manifest; a writer that loses the race for a version reads the winners' transactions to
  * decide whether its own still applies ([[Operation.conflictsWith]]) and, if so, rebuilds its
  * manifest on top of theirs ([[Operation.apply]]). */
final case class Transaction(readVersion: Long, uuid: String, operation: Operation)

sealed trait Operation {
  def name: String

  /** Why this operation cannot be applied after `other` committed, if it cannot. */
  def conflictsWith(other: Operation): Option[String]

  /** The next manifest: `base` with this operation applied (version, time and counters set by the caller). */
  def apply(base: Manifest): Manifest
}

object Operation {
  private def fragmentIds(fs: Seq[Fragment]): Set[Long] = fs.map(_.id).toSet

  /** New fragments with new ids (taken after the base's largest when committed). `schema` is the
    * schema the data was written with; it becomes the dataset's when the append creates it. */
  final case class Append(schema: FermionSchema, fragments: IndexedSeq[Fragment]) extends Operation {
    def name = "append"
    def conflictsWith(other: Operation): Option[String] = other match {
      case r: Replacing => Some(r.replaced)
      case _ => None
    }
    def apply(base: Manifest): Manifest =
      base.copy(
        schema = if (base.schema.fields.isEmpty) schema else SchemaIds.relaxNullability(base.schema, schema),
        fragments = base.fragments ++ renumber(base, fragments)
      )
  }

  /** The first version of a dataset that must not exist yet (a create-only write: save mode
    * errorifexists or ignore, CREATE TABLE, CREATE TABLE AS SELECT). Committed with read version 0;
    * any version committed meanwhile means another writer created the dataset first: a conflict. */
  final case class Create(schema: FermionSchema, fragments: IndexedSeq[Fragment]) extends Operation {
    def name = "create"
    def conflictsWith(other: Operation): Option[String] =
      Some(s"created the dataset first (${other.name}): it already exists")
    def apply(base: Manifest): Manifest = base.copy(schema = schema, fragments = renumber(base, fragments))
  }

  /** Replaces the dataset's rows and schema whatever they are ([[Overwrite]], [[Restore]]):
    * operations that read an older version conflict with them. */
  sealed trait Replacing extends Operation {

    /** What a conflicting writer is told this version did. */
    def replaced: String
  }

  /** The dataset's rows and schema replaced. Applies over anything: it does not depend on what was
    * there (an overwrite that read version 0 also replaces a dataset another writer created
    * meanwhile, as it would have had it run second). */
  final case class Overwrite(schema: FermionSchema, fragments: IndexedSeq[Fragment]) extends Replacing {
    def name = "overwrite"
    def replaced = "overwrote the dataset"
    def conflictsWith(other: Operation): Option[String] = None
    def apply(base: Manifest): Manifest = base.copy(schema = schema, fragments = renumber(base, fragments))
  }

  /** The schema and fragments of an older version `version` made current again (RESTORE). The
    * fragments keep their ids (ids are never reused, so none can clash), their data and deletion
    * files and their row ids: rows read back with the `_rowaddr` they had in that version. */
  final case class Restore(version: Long, schema: FermionSchema, fragments: IndexedSeq[Fragment]) extends Replacing {
    def name = "restore"
    def replaced = s"restored version $version"
    def conflictsWith(other: Operation): Option[String] = None
    def apply(base: Manifest): Manifest = base.copy(schema = schema, fragments = fragments)
  }

  /** Rows deleted: fragments given new deletion files, fragments removed when no row is left. */
  final case class Delete(updated: IndexedSeq[Fragment], removed: Set[Long], predicate: String) extends Operation {
    def name = "delete"
    def touched: Set[Long] = fragmentIds(updated) ++ removed
    def conflictsWith(other: Operation): Option[String] = other match {
      case r: Replacing => Some(r.replaced)
      case d: Delete if (d.touched & touched).nonEmpty =>
        Some(s"deleted rows of the same fragments (${(d.touched & touched).toSeq.sorted.mkString(", ")})")
      case c: Compact if (c.removed & touched).nonEmpty => Some("compacted fragments this delete changes")
      case _ => None
    }

    /** Only the deletion files change: anything else committed meanwhile on these fragments (new
      * column files) stays. */
    def apply(base: Manifest): Manifest = {
      val byId = updated.map(f => f.id -> f).toMap
      base.copy(fragments =
        base.fragments.filterNot(f => removed.contains(f.id)).map(f =>
          byId.get(f.id).map(u => f.copy(deletion = u.deletion)).getOrElse(f)
        )
      )
    }
  }

  /** A schema change that rewrites no data: columns added (null until written), dropped or renamed. */
  final case class Project(schema: FermionSchema, description: String) extends Operation {
    def name = "project"
    def conflictsWith(other: Operation): Option[String] = other match {
      case r: Replacing => Some(r.replaced)
      case _: Project | _: AddColumnFiles => Some("changed the schema")
      case _ => None
    }

    /** Keeps nullability an append relaxed meanwhile (files may hold nulls there now). */
    def apply(base: Manifest): Manifest = base.copy(schema = SchemaIds.relaxNullability(schema, base.schema))
  }

  /** New columns written as new data files of existing fragments (the files of a fragment hold
    * the same rows in the same stripes); fragments without a new file read the columns as null. */
  final case class AddColumnFiles(schema: FermionSchema, files: Map[Long, DataFile], description: String)
      extends Operation {
    def name = "add_columns"
    def conflictsWith(other: Operation): Option[String] = other match {
      case r: Replacing => Some(r.replaced)
      case _: Project | _: AddColumnFiles => Some("changed the schema")
      case c: Compact if (c.removed & files.keySet).nonEmpty => Some("compacted fragments this change adds files to")
      case _ => None
    }
    def apply(base: Manifest): Manifest =
      base.copy(
        schema = SchemaIds.relaxNullability(schema, base.schema),
        fragments = base.fragments.map(f => files.get(f.id).map(d => f.copy(files = f.files :+ d)).getOrElse(f))
      )
  }

  /** Fragments rewritten into fewer ones with their deletions applied. */
  final case class Compact(removed: Set[Long], fragments: IndexedSeq[Fragment]) extends Operation {
    def name = "compact"
    def conflictsWith(other: Operation): Option[String] = other match {
      case r: Replacing => Some(r.replaced)
      case d: Delete if (d.touched & removed).nonEmpty => Some("deleted rows of fragments this compaction rewrites")
      case c: Compact if (c.removed & removed).nonEmpty => Some("compacted the same fragments")
      case a: AddColumnFiles if (a.files.keySet & removed).nonEmpty =>
        Some("added column files to fragments this compaction rewrites")
      case _ => None
    }
    def apply(base: Manifest): Manifest =
      base.copy(fragments = base.fragments.filterNot(f => removed.contains(f.id)) ++ renumber(base, fragments))
  }

  /** Gives `fragments` ids after the base's largest (ids of committed fragments never change). */
  private def renumber(base: Manifest, fragments: IndexedSeq[Fragment]): IndexedSeq[Fragment] =
    fragments.zipWithIndex.map { case (f, i) => f.copy(id = base.maxFragmentId + 1 + i) }
}

object TransactionCodec {
  val Magic: Array[Byte] = "FRMT".getBytes(StandardCharsets.US_ASCII)
  private val Append = 1; private val Overwrite = 2; private val Delete = 3; private val Project = 4;
  private val Compact = 5
  private val AddColumnFiles = 6
  private val Create = 7
  private val Restore = 8

  def encode(t: Transaction): Array[Byte] = {
    val w = new MetadataWriter(Magic).u16(ManifestCodec.Major).u16(ManifestCodec.Minor)
    w.i64(t.readVersion).string(t.uuid)
    t.operation match {
      case Operation.Append(schema, fs) =>
        w.u8(Append).bytes(SchemaCodec.encode(schema)); ManifestCodec.writeFragments(w, fs)
      case Operation.Overwrite(schema, fs) =>
        w.u8(Overwrite).bytes(SchemaCodec.encode(schema)); ManifestCodec.writeFragments(w, fs)
      case Operation.Create(schema, fs) =>
        w.u8(Create).bytes(SchemaCodec.encode(schema)); ManifestCodec.writeFragments(w, fs)
      case Operation.Restore(version, schema, fs) =>
        w.u8(Restore).i64(version).bytes(SchemaCodec.encode(schema)); ManifestCodec.writeFragments(w, fs)
      case Operation.Delete(updated, removed, predicate) =>
        w.u8(Delete).string(predicate); ManifestCodec.writeFragments(w, updated)
        w.u32(removed.size); removed.toSeq.sorted.foreach(w.i64)
      case Operation.Project(schema, description) => w.u8(Project).bytes(SchemaCodec.encode(schema)).string(description)
      case Operation.Compact(removed, fs) =>
        w.u8(Compact); w.u32(removed.size); removed.toSeq.sorted.foreach(w.i64); ManifestCodec.writeFragments(w, fs)
      case Operation.AddColumnFiles(schema, files, description) =>
        w.u8(AddColumnFiles).bytes(SchemaCodec.encode(schema)).string(description).u32(files.size)
        files.toSeq.sortBy(_._1).foreach { case (id, d) =>
          w.i64(id).string(d.path).u32(d.fieldIds.size); d.fieldIds.foreach(w.u32)
        }
    }
    w.finish()
  }

  /** None for an operation this reader does not know (the caller treats it as a conflict). */
  def decode(bytes: Array[Byte], dataset: String, file: String): Option[Transaction] = {
    val r = new MetadataReader(bytes, Magic, dataset, file)
    val major = r.u16("major version"); val minor = r.u16("minor version")
    if (major != ManifestCodec.Major) return None
    val readVersion = r.i64("read version")
    val uuid = r.string("uuid")
    def schema() =
      try SchemaCodec.decode(ByteBuffer.wrap(r.bytes("schema")))
      catch {
        case e: IllegalArgumentException =>
          throw new InvalidFermionDatasetException(dataset, file, s"schema does not decode: ${e.getMessage}", e)
      }
    def ids() = (0 until r.count("fragment ids", 8)).map(_ => r.i64("fragment id")).toSet
    val op: Option[Operation] = r.u8("operation") match {
      case Append => val s = schema(); Some(Operation.Append(s, ManifestCodec.readFragments(r)))
      case Overwrite => val s = schema(); Some(Operation.Overwrite(s, ManifestCodec.readFragments(r)))
      case Create => val s = schema(); Some(Operation.Create(s, ManifestCodec.readFragments(r)))
      case Restore =>
        val v = r.i64("restored version"); val s = schema();
        Some(Operation.Restore(v, s, ManifestCodec.readFragments(r)))
      case Delete =>
        val p = r.string("predicate"); val u = ManifestCodec.readFragments(r); Some(Operation.Delete(u, ids(), p))
      case Project => val s = schema(); Some(Operation.Project(s, r.string("description")))
      case Compact => val removed = ids(); Some(Operation.Compact(removed, ManifestCodec.readFragments(r)))
      case AddColumnFiles =>
        val s = schema(); val d = r.string("description")
        val files = (0 until r.count("column files", 16)).map { _ =>
          val id = r.i64("fragment id"); val path = r.string("data file path")
          id -> DataFile(path, (0 until r.count("field ids", 4)).map(_ => r.u32("field id")))
        }.toMap
        Some(Operation.AddColumnFiles(s, files, d))
      case _ => None
    }
    // A newer minor version may append fields this reader skips, as in manifests.
    op.map { o => if (minor <= ManifestCodec.Minor) r.done(); Transaction(readVersion, uuid, o) }
  }
}
