package io.fermion.core.dataset

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets

import io.fermion.core.expr.{ConstantFilter, FilterExpr, FilterValue}
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
  final case class Append(
      schema: FermionSchema,
      fragments: IndexedSeq[Fragment],
      /** The partition spec the fragments were written for (must be the dataset's). */
      partitionSpec: IndexedSeq[Int] = IndexedSeq.empty
  ) extends Operation {
    def name = "append"
    def conflictsWith(other: Operation): Option[String] = other match {
      case r: Replacing => Some(r.replaced)
      case _ => None
    }
    def apply(base: Manifest): Manifest = {
      val creates = base.schema.fields.isEmpty
      if (!creates) samePartitioning(base, partitionSpec)
      base.copy(
        schema = if (creates) schema else SchemaIds.relaxNullability(base.schema, schema),
        fragments = base.fragments ++ renumber(base, fragments),
        partitionSpec = if (creates) partitionSpec else base.partitionSpec
      )
    }
  }

  /** Rows of some partitions replaced (static or dynamic INSERT OVERWRITE, `replaceWhere`): the
    * fragments of the version read whose partition values satisfy `predicate` (`removed`) give way
    * to new fragments, whose values satisfy it too. `predicate` is over partition columns only,
    * named by field id in decimal (see [[Partitioning.byId]]). Concurrent commits that touched
    * those partitions conflict; commits elsewhere do not. */
  final case class ReplacePartitions(
      schema: FermionSchema,
      partitionSpec: IndexedSeq[Int],
      predicate: FilterExpr,
      removed: Set[Long],
      fragments: IndexedSeq[Fragment],
      description: String
  ) extends Operation {
    def name = "replace_partitions"

    /** Whether some row of a fragment with `values` could lie in the replaced partitions. */
    def covers(values: IndexedSeq[Option[FilterValue]]): Boolean =
      ConstantFilter.mayMatch(predicate, Partitioning.byId(partitionSpec, values))

    private def into(fs: Seq[Fragment]): Seq[Fragment] = fs.filter(f => covers(f.partition))

    def conflictsWith(other: Operation): Option[String] = other match {
      case r: Replacing => Some(r.replaced)
      case a: Append if a.partitionSpec != partitionSpec => Some("appended rows partitioned otherwise")
      case a: Append if into(a.fragments).nonEmpty => Some(s"appended rows to the partitions this overwrite replaces")
      case r: ReplacePartitions if (r.removed & removed).nonEmpty || into(r.fragments).nonEmpty =>
        Some("replaced the same partitions")
      case d: Delete if (d.touched & removed).nonEmpty => Some("deleted rows of partitions this overwrite replaces")
      case c: Compact if (c.removed & removed).nonEmpty => Some("compacted fragments this overwrite replaces")
      case a: AddColumnFiles if (a.files.keySet & removed).nonEmpty =>
        Some("added column files to fragments this overwrite replaces")
      case _ => None
    }
    def apply(base: Manifest): Manifest = {
      samePartitioning(base, partitionSpec)
      base.copy(
        schema = SchemaIds.relaxNullability(base.schema, schema),
        fragments = base.fragments.filterNot(f => removed.contains(f.id)) ++ renumber(base, fragments)
      )
    }
  }

  /** Appends and partition overwrites keep the dataset's partitioning (only a Replacing operation,
    * which conflicts with them, can change it). */
  private def samePartitioning(base: Manifest, spec: IndexedSeq[Int]): Unit =
    if (base.partitionSpec != spec)
      throw new IllegalStateException(
        s"rows written for partition spec [${spec.mkString(", ")}] cannot go into version ${base.version}, " +
          s"partitioned by [${base.partitionSpec.mkString(", ")}]"
      )

  /** The first version of a dataset that must not exist yet (a create-only write: save mode
    * errorifexists or ignore, CREATE TABLE, CREATE TABLE AS SELECT). Committed with read version 0;
    * any version committed meanwhile means another writer created the dataset first: a conflict. */
  final case class Create(
      schema: FermionSchema,
      fragments: IndexedSeq[Fragment],
      partitionSpec: IndexedSeq[Int] = IndexedSeq.empty
  ) extends Operation {
    def name = "create"
    def conflictsWith(other: Operation): Option[String] =
      Some(s"created the dataset first (${other.name}): it already exists")
    def apply(base: Manifest): Manifest =
      base.copy(schema = schema, fragments = renumber(base, fragments), partitionSpec = partitionSpec)
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
  final case class Overwrite(
      schema: FermionSchema,
      fragments: IndexedSeq[Fragment],
      partitionSpec: IndexedSeq[Int] = IndexedSeq.empty
  ) extends Replacing {
    def name = "overwrite"
    def replaced = "overwrote the dataset"
    def conflictsWith(other: Operation): Option[String] = None
    def apply(base: Manifest): Manifest =
      base.copy(schema = schema, fragments = renumber(base, fragments), partitionSpec = partitionSpec)
  }

  /** The schema and fragments of an older version `version` made current again (RESTORE). The
    * fragments keep their ids (ids are never reused, so none can clash), their data and deletion
    * files and their row ids: rows read back with the `_rowaddr` they had in that version. */
  final case class Restore(
      version: Long,
      schema: FermionSchema,
      fragments: IndexedSeq[Fragment],
      partitionSpec: IndexedSeq[Int] = IndexedSeq.empty
  ) extends Replacing {
    def name = "restore"
    def replaced = s"restored version $version"
    def conflictsWith(other: Operation): Option[String] = None
    def apply(base: Manifest): Manifest =
      base.copy(schema = schema, fragments = fragments, partitionSpec = partitionSpec)
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
      case p: ReplacePartitions if (p.removed & touched).nonEmpty => Some("replaced partitions this delete changes")
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

  /** Rows changed (UPDATE, MERGE): the rows `delete` marks deleted and the new fragments of `append`
    * (the changed and inserted rows) in one version, so no reader sees one without the other. It
    * conflicts where either part would; a committed one is judged as both parts ([[parts]]). */
  final case class Update(delete: Delete, append: Append) extends Operation {
    def name = "update"
    def conflictsWith(other: Operation): Option[String] =
      delete.conflictsWith(other).orElse(append.conflictsWith(other))
    def apply(base: Manifest): Manifest = append.apply(delete.apply(base))
  }

  /** An append that changes the schema (`mergeSchema`): `project` gives the dataset the columns
    * the data adds and the types it widens, `append` adds the data, in one version. It conflicts
    * where either part would (a schema changed meanwhile, an overwrite); a committed one is judged
    * as both parts ([[parts]]), so other schema changes conflict with it. */
  final case class AppendWithSchema(project: Project, append: Append) extends Operation {
    def name = "append_with_schema"
    def conflictsWith(other: Operation): Option[String] =
      project.conflictsWith(other).orElse(append.conflictsWith(other))
    def apply(base: Manifest): Manifest = append.apply(project.apply(base))
  }

  /** The schema the new data files of `op` were written with, when it adds rows to a dataset
    * (their types may be older than the dataset's: see [[io.fermion.core.schema.TypeWidening]]). */
  def writtenSchema(op: Operation): Option[FermionSchema] = op match {
    case a: Append => Some(a.schema)
    case u: Update => Some(u.append.schema)
    case a: AppendWithSchema => Some(a.append.schema)
    case r: ReplacePartitions => Some(r.schema)
    case _ => None
  }

  /** What a committed operation is, for the conflict rules: an [[Update]] is its delete and its
    * append, an [[AppendWithSchema]] its project and its append. */
  def parts(op: Operation): Seq[Operation] = op match {
    case u: Update => Seq(u.delete, u.append)
    case a: AppendWithSchema => Seq(a.project, a.append)
    case other => Seq(other)
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
      case p: ReplacePartitions if (p.removed & files.keySet).nonEmpty =>
        Some("replaced partitions this change adds files to")
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
      case p: ReplacePartitions if (p.removed & removed).nonEmpty =>
        Some("replaced partitions this compaction rewrites")
      case _ => None
    }
    def apply(base: Manifest): Manifest =
      base.copy(fragments = base.fragments.filterNot(f => removed.contains(f.id)) ++ renumber(base, fragments))
  }

  /** Gives `fragments` ids after the base's largest (ids of committed fragments never change). */
  private def renumber(base: Manifest, fragments: IndexedSeq[Fragment]): IndexedSeq[Fragment] =
    fragments.zipWithIndex.map { case (f, i) => f.copy(id = base.maxFragmentId + 1 + i) }
}

private[core] object TransactionCodec {
  val Magic: Array[Byte] = "FRMT".getBytes(StandardCharsets.US_ASCII)
  private val Append = 1; private val Overwrite = 2; private val Delete = 3; private val Project = 4;
  private val Compact = 5
  private val AddColumnFiles = 6
  private val Create = 7
  private val Restore = 8
  private val ReplacePartitions = 9
  private val Update = 10
  private val AppendWithSchema = 11

  /** Nested filters deeper than this are refused (writers build balanced trees). */
  private val MaxFilterDepth = 1000

  /** The fragments the payload lists (those the partitioning section gives values for), and the
    * partition spec the operation carries. */
  private def partitioned(op: Operation): (IndexedSeq[Fragment], IndexedSeq[Int]) = op match {
    case o: Operation.Append => (o.fragments, o.partitionSpec)
    case o: Operation.Overwrite => (o.fragments, o.partitionSpec)
    case o: Operation.Create => (o.fragments, o.partitionSpec)
    case o: Operation.Restore => (o.fragments, o.partitionSpec)
    case o: Operation.ReplacePartitions => (o.fragments, o.partitionSpec)
    case o: Operation.Delete => (o.updated, IndexedSeq.empty)
    case o: Operation.Update => (o.delete.updated ++ o.append.fragments, o.append.partitionSpec)
    case o: Operation.AppendWithSchema => (o.append.fragments, o.append.partitionSpec)
    case o: Operation.Compact => (o.fragments, IndexedSeq.empty)
    case _: Operation.Project | _: Operation.AddColumnFiles => (IndexedSeq.empty, IndexedSeq.empty)
  }

  def encode(t: Transaction): Array[Byte] = {
    val (listed, spec) = partitioned(t.operation)
    // Minor 1 (a section list after the payload) only where there is something to put there: the
    // transactions of unpartitioned datasets stay byte for byte what minor 0 writers write.
    val sections =
      if (spec.isEmpty && listed.forall(_.partition.isEmpty) && !t.operation.isInstanceOf[Operation.ReplacePartitions])
        Nil
      else Seq(ManifestCodec.PartitioningSection -> ManifestCodec.partitioningBody(spec, listed))
    val w = new MetadataWriter(Magic).u16(ManifestCodec.Major).u16(if (sections.isEmpty) 0 else 1)
    w.i64(t.readVersion).string(t.uuid)
    t.operation match {
      case o: Operation.Append =>
        w.u8(Append).bytes(SchemaCodec.encode(o.schema)); ManifestCodec.writeFragments(w, o.fragments)
      case o: Operation.Overwrite =>
        w.u8(Overwrite).bytes(SchemaCodec.encode(o.schema)); ManifestCodec.writeFragments(w, o.fragments)
      case o: Operation.Create =>
        w.u8(Create).bytes(SchemaCodec.encode(o.schema)); ManifestCodec.writeFragments(w, o.fragments)
      case o: Operation.Restore =>
        w.u8(Restore).i64(o.version).bytes(SchemaCodec.encode(o.schema)); ManifestCodec.writeFragments(w, o.fragments)
      case Operation.Delete(updated, removed, predicate) =>
        w.u8(Delete); writeDelete(w, updated, removed, predicate)
      case Operation.Update(Operation.Delete(updated, removed, description), append) =>
        w.u8(Update); writeDelete(w, updated, removed, description)
        w.bytes(SchemaCodec.encode(append.schema)); ManifestCodec.writeFragments(w, append.fragments)
      case Operation.AppendWithSchema(Operation.Project(schema, description), append) =>
        w.u8(AppendWithSchema).bytes(SchemaCodec.encode(schema)).string(description)
        w.bytes(SchemaCodec.encode(append.schema)); ManifestCodec.writeFragments(w, append.fragments)
      case Operation.Project(schema, description) => w.u8(Project).bytes(SchemaCodec.encode(schema)).string(description)
      case Operation.Compact(removed, fs) =>
        w.u8(Compact); w.u32(removed.size); removed.toSeq.sorted.foreach(w.i64); ManifestCodec.writeFragments(w, fs)
      case Operation.AddColumnFiles(schema, files, description) =>
        w.u8(AddColumnFiles).bytes(SchemaCodec.encode(schema)).string(description).u32(files.size)
        files.toSeq.sortBy(_._1).foreach { case (id, d) =>
          w.i64(id).string(d.path).u32(d.fieldIds.size); d.fieldIds.foreach(w.u32)
        }
      case o: Operation.ReplacePartitions =>
        w.u8(ReplacePartitions).bytes(SchemaCodec.encode(o.schema)).string(o.description)
        writeFilter(w, o.predicate)
        w.u32(o.removed.size); o.removed.toSeq.sorted.foreach(w.i64)
        ManifestCodec.writeFragments(w, o.fragments)
    }
    if (sections.nonEmpty) ManifestCodec.writeSections(w, sections)
    w.finish()
  }

  private def writeDelete(w: MetadataWriter, updated: IndexedSeq[Fragment], removed: Set[Long], text: String): Unit = {
    w.string(text); ManifestCodec.writeFragments(w, updated)
    w.u32(removed.size); removed.toSeq.sorted.foreach(w.i64)
  }

  /** A filter over partition columns named by field id (10.2): a node kind, then its fields. */
  private def writeFilter(w: MetadataWriter, e: FilterExpr): Unit = {
    import FilterExpr._
    def id(c: String): Int =
      c.toIntOption.filter(_ >= 0).getOrElse(
        throw new IllegalArgumentException(s"filter column '$c' is not a field id")
      )
    e match {
      case Compare(c, op, v) =>
        w.u8(1).u32(id(c)).u8(op match {
          case Eq => 1; case NotEq => 2; case Lt => 3; case LtEq => 4; case Gt => 5; case GtEq => 6
        })
        ManifestCodec.writeValue(w, Some(v))
      case In(c, vs) => w.u8(2).u32(id(c)).u32(vs.size); vs.foreach(v => ManifestCodec.writeValue(w, Some(v)))
      case IsNull(c) => w.u8(3).u32(id(c))
      case IsNotNull(c) => w.u8(4).u32(id(c))
      case And(l, r) => w.u8(5); writeFilter(w, l); writeFilter(w, r)
      case Or(l, r) => w.u8(6); writeFilter(w, l); writeFilter(w, r)
      case Not(c) => w.u8(7); writeFilter(w, c)
      case StartsWith(c, p) => w.u8(8).u32(id(c)).bytes(p)
      case EndsWith(c, p) => w.u8(9).u32(id(c)).bytes(p)
      case Contains(c, p) => w.u8(10).u32(id(c)).bytes(p)
      case _: Like => throw new IllegalArgumentException("a partition filter cannot hold a LIKE pattern")
      case Unknown => throw new IllegalArgumentException("a partition filter cannot hold an unknown part")
    }
  }

  private def readFilter(r: MetadataReader, depth: Int = 0): FilterExpr = {
    import FilterExpr._
    r.check(depth < MaxFilterDepth, s"partition filter nested deeper than $MaxFilterDepth")
    def value(): FilterValue = {
      val v = ManifestCodec.readValue(r)
      r.check(v.nonEmpty, "a partition filter compares with null"); v.get
    }
    r.u8("filter node") match {
      case 1 =>
        val c = r.u32("filter field id").toString
        val op = r.u8("comparison") match {
          case 1 => Eq; case 2 => NotEq; case 3 => Lt; case 4 => LtEq; case 5 => Gt; case 6 => GtEq
          case k => r.check(false, s"unknown comparison $k"); Eq
        }
        Compare(c, op, value())
      case 2 =>
        val c = r.u32("filter field id").toString
        In(c, (0 until r.count("filter values", 2)).map(_ => value()))
      case 3 => IsNull(r.u32("filter field id").toString)
      case 4 => IsNotNull(r.u32("filter field id").toString)
      case 5 => val l = readFilter(r, depth + 1); And(l, readFilter(r, depth + 1))
      case 6 => val l = readFilter(r, depth + 1); Or(l, readFilter(r, depth + 1))
      case 7 => Not(readFilter(r, depth + 1))
      case 8 => val c = r.u32("filter field id").toString; StartsWith(c, r.bytes("prefix"))
      case 9 => val c = r.u32("filter field id").toString; EndsWith(c, r.bytes("suffix"))
      case 10 => val c = r.u32("filter field id").toString; Contains(c, r.bytes("infix"))
      case k => r.check(false, s"unknown filter node $k"); Unknown
    }
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
      case Update =>
        val d = r.string("description"); val u = ManifestCodec.readFragments(r); val removed = ids(); val s = schema()
        Some(Operation.Update(Operation.Delete(u, removed, d), Operation.Append(s, ManifestCodec.readFragments(r))))
      case Project => val s = schema(); Some(Operation.Project(s, r.string("description")))
      case AppendWithSchema =>
        val s = schema(); val d = r.string("description"); val a = schema()
        Some(Operation.AppendWithSchema(Operation.Project(s, d), Operation.Append(a, ManifestCodec.readFragments(r))))
      case Compact => val removed = ids(); Some(Operation.Compact(removed, ManifestCodec.readFragments(r)))
      case AddColumnFiles =>
        val s = schema(); val d = r.string("description")
        val files = (0 until r.count("column files", 16)).map { _ =>
          val id = r.i64("fragment id"); val path = r.string("data file path")
          id -> DataFile(path, (0 until r.count("field ids", 4)).map(_ => r.u32("field id")))
        }.toMap
        Some(Operation.AddColumnFiles(s, files, d))
      case ReplacePartitions =>
        val s = schema(); val d = r.string("description"); val p = readFilter(r); val removed = ids()
        Some(Operation.ReplacePartitions(s, IndexedSeq.empty, p, removed, ManifestCodec.readFragments(r), d))
      case _ => None
    }
    op.map { o0 =>
      var o = o0
      var partitioning = false
      if (minor >= 1) ManifestCodec.readSections(r) { case ManifestCodec.PartitioningSection =>
        rd =>
          val (listed, _) = partitioned(o0)
          val (spec, values) = ManifestCodec.readPartitioning(rd, listed.size)
          o = withPartitioning(o0, spec, values)
          partitioning = true
      }
      r.check(
        partitioning || !o0.isInstanceOf[Operation.ReplacePartitions],
        "a replace_partitions without its partitioning"
      )
      // A newer minor version may append fields this reader skips, as in manifests.
      if (minor <= ManifestCodec.Minor) r.done() else r.skipRest()
      Transaction(readVersion, uuid, o)
    }
  }

  private def withPartitioning(
      op: Operation,
      spec: IndexedSeq[Int],
      values: IndexedSeq[IndexedSeq[Option[FilterValue]]]
  ): Operation = {
    def put(fs: IndexedSeq[Fragment]) = fs.zip(values).map { case (f, v) => f.copy(partition = v) }
    op match {
      case o: Operation.Append => o.copy(fragments = put(o.fragments), partitionSpec = spec)
      case o: Operation.Overwrite => o.copy(fragments = put(o.fragments), partitionSpec = spec)
      case o: Operation.Create => o.copy(fragments = put(o.fragments), partitionSpec = spec)
      case o: Operation.Restore => o.copy(fragments = put(o.fragments), partitionSpec = spec)
      case o: Operation.ReplacePartitions => o.copy(fragments = put(o.fragments), partitionSpec = spec)
      case o: Operation.Delete => o.copy(updated = put(o.updated))
      case o: Operation.Compact => o.copy(fragments = put(o.fragments))
      case Operation.Update(d, a) =>
        val (updated, added) = put(d.updated ++ a.fragments).splitAt(d.updated.size)
        Operation.Update(d.copy(updated = updated), a.copy(fragments = added, partitionSpec = spec))
      case Operation.AppendWithSchema(p, a) =>
        Operation.AppendWithSchema(p, a.copy(fragments = put(a.fragments), partitionSpec = spec))
      case o => o
    }
  }
}
