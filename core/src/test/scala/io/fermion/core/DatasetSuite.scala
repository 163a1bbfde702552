package io.fermion.core

import java.util.concurrent.{Callable, Executors}

import scala.jdk.CollectionConverters._
import scala.util.Random

import io.fermion.core.dataset._
import io.fermion.core.schema.{FermionField, FermionSchema, FermionType}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

/** The dataset layer without Spark: manifest and transaction bytes, version naming, commits,
  * conflicts between concurrent writers, time travel, tags and deletion files. */
class DatasetSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private val schema = FermionSchema(IndexedSeq(
    FermionField("id", 1, FermionType.Int64, nullable = false),
    FermionField(
      "s",
      2,
      FermionType.Struct,
      nullable = true,
      IndexedSeq(FermionField("x", 3, FermionType.Utf8, nullable = true))
    )
  ))

  private def newDataset(): FermionDataset =
    new FermionDataset(new Path(TestFiles.tempDir("fermion-ds").resolve("t").toUri), conf)
  private def fragment(rows: Long, files: Int = 1): Fragment =
    Fragment(
      0,
      rows,
      (0 until files).map(i => DataFile(s"data/f-${Random.nextInt()}-$i.fermion", IndexedSeq(1 + i))),
      None
    )

  test("V2 manifest names sort newest first and map back to their versions") {
    val versions = Seq(1L, 2L, 9L, 10L, 11L, 99L, 100L, 123456789L, Long.MaxValue)
    val names = versions.map(DatasetLayout.manifestName)
    assert(names.forall(_.length == 20 + ".manifest".length))
    assert(names.sorted == names.reverse, "lexicographic order is newest first")
    assert(names.map(DatasetLayout.versionOf) == versions.map(Some(_)))
    assert(DatasetLayout.versionOf("1.manifest").isEmpty && DatasetLayout.versionOf(".tmp-x").isEmpty)
  }

  test("manifests and transactions round-trip through their bytes; damage is a typed error") {
    val rnd = new Random(1)
    for (_ <- 0 until 50) {
      val frags = (0 until rnd.nextInt(20)).map { i =>
        val rows = rnd.nextInt(1000000).toLong
        Fragment(
          i,
          rows,
          (0 until 1 + rnd.nextInt(3)).map(k =>
            DataFile(s"data/${rnd.nextLong()}.fermion", IndexedSeq.fill(rnd.nextInt(4))(rnd.nextInt(100)))
          ),
          if (rnd.nextBoolean()) Some(DeletionFile(s"_deletions/$i-1-2.bin", 1 + rnd.nextInt(2), 0)) else None,
          rnd.nextInt(3) match {
            case 0 => None
            case 1 => Some(RowIds.Start(rnd.nextLong() >>> 1))
            case _ => Some(RowIds.External(s"_rowids/$i.rowids", rows))
          }
        )
      }
      val m = Manifest(
        1 + rnd.nextInt(1000),
        rnd.nextLong(),
        1,
        1,
        schema,
        frags,
        99,
        1234,
        "1-x.txn",
        "append",
        "t1",
        Map("a" -> "b", "ü" -> "")
      )
      assert(ManifestCodec.decode(ManifestCodec.encode(m), "ds", "m") == m)
      for (
        op <- Seq(
          Operation.Append(schema, frags),
          Operation.Overwrite(schema, frags),
          Operation.Create(schema, frags),
          Operation.Restore(rnd.nextInt(100).toLong + 1, schema, frags),
          Operation.Delete(frags, Set(3L, 4L), "id > 3"),
          Operation.Update(Operation.Delete(frags.take(2), Set(5L), "UPDATE"), Operation.Append(schema, frags)),
          Operation.Project(schema, "add column"),
          Operation.Compact(Set(1L), frags),
          Operation.AddColumnFiles(schema, Map(3L -> DataFile("data/x.fermion", IndexedSeq(7, 8))), "add x")
        )
      ) {
        val t = Transaction(rnd.nextInt(100).toLong, "u", op)
        assert(TransactionCodec.decode(TransactionCodec.encode(t), "ds", "t").contains(t))
      }
    }
    val bytes = ManifestCodec.encode(Manifest(1, 2, 0, 0, schema, IndexedSeq(fragment(10)), 0, 0, "", "append"))
    for (i <- Seq(0, 5, 20, bytes.length / 2, bytes.length - 9)) {
      val damaged = bytes.clone(); damaged(i) = (damaged(i) ^ 0x10).toByte
      intercept[InvalidFermionDatasetException](ManifestCodec.decode(damaged, "ds", "m"))
    }
    intercept[InvalidFermionDatasetException](ManifestCodec.decode(bytes.take(bytes.length - 3), "ds", "m"))
  }

  test("commits make versions; time travel by version, time and tag") {
    val ds = newDataset()
    assert(!ds.exists && ds.latest().isEmpty)
    val v1 = ds.commit(0, Operation.Append(schema, IndexedSeq(fragment(10), fragment(5))))
    assert(v1.version == 1 && v1.fragments.map(_.id) == Seq(1L, 2L) && v1.rowCount == 15 && v1.schema == schema)
    val v2 = ds.commit(1, Operation.Append(schema, IndexedSeq(fragment(7))))
    assert(v2.fragments.map(_.id) == Seq(1L, 2L, 3L) && v2.timestampMillis > v1.timestampMillis)
    val v3 = ds.commit(2, Operation.Overwrite(schema, IndexedSeq(fragment(1))))
    assert(v3.fragments.map(_.id) == Seq(4L) && v3.rowCount == 1, "fragment ids are never reused")
    assert(ds.versionNumbers() == Seq(1L, 2L, 3L))
    assert(ds.manifest(2) == v2)
    assert(ds.versionAsOfTime(v2.timestampMillis).version == 2 && ds.versionAsOfTime(Long.MaxValue).version == 3)
    intercept[FermionVersionNotFoundException](ds.versionAsOfTime(v1.timestampMillis - 1))
    intercept[FermionVersionNotFoundException](ds.manifest(4))
    ds.createTag("before-overwrite", 2)
    assert(
      ds.tagVersion("before-overwrite") == 2 && ds.tags == Map("before-overwrite" -> 2L)
    )
    intercept[IllegalArgumentException](ds.createTag("before-overwrite", 3))
    ds.deleteTag("before-overwrite")
    assert(ds.tags.isEmpty)
  }

  test("concurrent appends all land; conflicting deletes fail with the typed error") {
    val ds = newDataset()
    ds.commit(0, Operation.Append(schema, IndexedSeq(fragment(100), fragment(100))))
    val pool = Executors.newFixedThreadPool(8)
    try {
      val appends = (0 until 24).map(i =>
        pool.submit(new Callable[Manifest] {
          def call(): Manifest = ds.commit(1, Operation.Append(schema, IndexedSeq(fragment(i + 1))))
        })
      )
      val results = appends.map(_.get())
      assert(results.map(_.version).toSet.size == 24, "each append got its own version")
      val last = ds.latest().get
      assert(last.version == 25 && last.fragments.size == 26 && last.fragments.map(_.id).toSet.size == 26)
      assert(last.rowCount == 200 + (1 to 24).sum)
      // two deletes of the same fragment from the same read version: exactly one wins
      val d = ds.manifest(25).fragments.head
      val deletes = (0 until 2).map(_ =>
        pool.submit(new Callable[Either[Throwable, Manifest]] {
          def call(): Either[Throwable, Manifest] =
            try Right(ds.commit(
                25,
                Operation.Delete(
                  IndexedSeq(d.copy(deletion = Some(DeletionFile("_deletions/x.bin", 2, 1)))),
                  Set.empty,
                  "x"
                )
              ))
            catch { case e: Throwable => Left(e) }
        })
      ).map(_.get())
      assert(deletes.count(_.isRight) == 1)
      assert(deletes.collect { case Left(e: FermionCommitConflictException) => e }.size == 1, deletes.toString)
      // a delete of another fragment applies over an append committed meanwhile
      ds.commit(26, Operation.Append(schema, IndexedSeq(fragment(3))))
      val other = ds.manifest(26).fragments(1)
      val after = ds.commit(26, Operation.Delete(IndexedSeq.empty, Set(other.id), "all"))
      assert(after.version == 28 && !after.fragments.exists(_.id == other.id) && after.fragments.size == 26)
    } finally pool.shutdownNow()
  }

  test("create-only commits: the second creator fails, overwrites replace whatever was created meanwhile") {
    val ds = newDataset()
    ds.commit(0, Operation.Create(schema, IndexedSeq(fragment(3))))
    val e = intercept[FermionCommitConflictException](ds.commit(0, Operation.Create(schema, IndexedSeq(fragment(4)))))
    assert(e.getMessage.contains("already exists"), e.getMessage)
    assert(ds.latest().get.rowCount == 3 && ds.latestVersion().contains(1L))
    // an overwrite that read version 0 replaces what another writer created meanwhile
    val o = ds.commit(0, Operation.Overwrite(schema, IndexedSeq(fragment(5))))
    assert(o.version == 2 && o.rowCount == 5 && o.operation == "overwrite")
    // an append that read version 0 lands after a creation, not after an overwrite
    intercept[FermionCommitConflictException](ds.commit(0, Operation.Append(schema, IndexedSeq(fragment(1)))))
    assert(ds.commit(2, Operation.Append(schema, IndexedSeq(fragment(1)))).rowCount == 6)
    intercept[IllegalArgumentException](ds.commit(3, Operation.Create(schema, IndexedSeq.empty)))
    // many concurrent creators: exactly one wins
    val racing = newDataset()
    val pool = Executors.newFixedThreadPool(6)
    try {
      val results = (0 until 6).map(i =>
        pool.submit(new Callable[Either[Throwable, Manifest]] {
          def call(): Either[Throwable, Manifest] =
            try Right(racing.commit(0, Operation.Create(schema, IndexedSeq(fragment(i + 1)))))
            catch { case t: Throwable => Left(t) }
        })
      ).map(_.get())
      assert(results.count(_.isRight) == 1, results.toString)
      assert(results.collect { case Left(_: FermionCommitConflictException) => 1 }.size == 5, results.toString)
      assert(racing.versionNumbers() == Seq(1L))
    } finally pool.shutdownNow()
  }

  test("restore commits an older version's fragments as a new version; deleteRows and deleteAll") {
    val ds = newDataset()
    def onDisk(f: Fragment): Fragment = {
      f.files.foreach(d => ds.fs.create(ds.resolvePath(d.path), false).close()); f
    }
    ds.commit(0, Operation.Append(schema, IndexedSeq(onDisk(fragment(10)), onDisk(fragment(20)))))
    val (n, v2) = ds.deleteRows(1, Map(1L -> RoaringBitmap.bitmapOf(0, 1, 2), 2L -> RoaringBitmap.bitmapOf()), "x")
    assert(n == 3 && v2.get.version == 2 && v2.get.rowCount == 27)
    // rows deleted already do not count again; nothing new: no version
    assert(ds.deleteRows(2, Map(1L -> RoaringBitmap.bitmapOf(1, 2)), "again") == ((0L, None)))
    val (m, v3) = ds.deleteRows(2, Map(1L -> RoaringBitmap.bitmapOf(2, 3)), "more")
    assert(m == 1 && v3.get.fragments.find(_.id == 1).get.deletion.get.deletedRows == 4)
    intercept[IllegalArgumentException](ds.deleteRows(3, Map(9L -> RoaringBitmap.bitmapOf(1)), "no such fragment"))
    intercept[IllegalArgumentException](ds.deleteRows(3, Map(1L -> RoaringBitmap.bitmapOf(10)), "past the end"))
    val (all, v4) = ds.deleteRows(3, Map(1L -> RoaringBitmap.bitmapOfRange(0, 10)), "whole fragment")
    assert(all == 6 && v4.get.fragments.map(_.id) == Seq(2L), "a fragment without rows is removed")
    ds.commit(4, Operation.Overwrite(schema, IndexedSeq(fragment(1))))
    val r = ds.restore(2)
    assert(r.version == 6 && r.operation == "restore" && r.rowCount == 27)
    assert(r.fragments == ds.manifest(2).fragments, "fragments keep their ids, files and deletion files")
    assert(r.maxFragmentId == 3)
    assert(ds.commit(6, Operation.Append(schema, IndexedSeq(fragment(2)))).fragments.last.id == 4)
    assert(ds.deleteAll(7, "truncate").get.fragments.isEmpty)
    assert(ds.deleteAll(8, "nothing").isEmpty)
    intercept[FermionVersionNotFoundException](ds.restore(99))
    val gone = intercept[FermionVersionNotFoundException](ds.restore(5))
    assert(gone.getMessage.contains("no longer exists"), gone.getMessage)
    // a delete that read before the restore conflicts with it
    val late = intercept[FermionCommitConflictException](
      ds.commit(5, Operation.Delete(IndexedSeq.empty, Set(3L), "late"))
    )
    assert(late.getMessage.contains("restored version 2"), late.getMessage)
  }

  test("updateRows deletes and adds rows in one version; it conflicts where a delete or an append would") {
    val ds = newDataset()
    def onDisk(f: Fragment): Fragment = {
      f.files.foreach(d => ds.fs.create(ds.resolvePath(d.path), false).close()); f
    }
    ds.commit(0, Operation.Append(schema, IndexedSeq(onDisk(fragment(10)), onDisk(fragment(20)))))
    val (n, v2) =
      ds.updateRows(
        1,
        Map(1L -> RoaringBitmap.bitmapOf(0, 1), 2L -> RoaringBitmap.bitmapOfRange(0, 20)),
        schema,
        IndexedSeq.empty,
        IndexedSeq(onDisk(fragment(22))),
        "UPDATE"
      )
    val m2 = v2.get
    assert(n == 22 && m2.version == 2 && m2.operation == "update")
    assert(m2.fragments.map(_.id) == Seq(1L, 3L), "fragment 2 lost every row; the new rows are fragment 3")
    assert(m2.rowCount == 8 + 22 && m2.fragments.head.deletion.get.deletedRows == 2)
    assert(ds.updateRows(2, Map.empty, schema, IndexedSeq.empty, IndexedSeq.empty, "nothing") == ((0L, None)))
    // inserts only (a MERGE whose rows all matched nothing): an update without deletions
    val (none, v3) = ds.updateRows(2, Map.empty, schema, IndexedSeq.empty, IndexedSeq(onDisk(fragment(1))), "MERGE")
    assert(none == 0 && v3.get.rowCount == 31)
    // Concurrent writers that read version 3: a delete of a fragment an update touched conflicts,
    // in both orders; appends and deletes elsewhere do not.
    ds.updateRows(3, Map(1L -> RoaringBitmap.bitmapOf(5)), schema, IndexedSeq.empty, IndexedSeq(fragment(1)), "u1")
    val e1 = intercept[FermionCommitConflictException](ds.deleteRows(3, Map(1L -> RoaringBitmap.bitmapOf(6)), "d"))
    assert(e1.getMessage.contains("deleted rows of the same fragments (1)"), e1.getMessage)
    val e2 = intercept[FermionCommitConflictException](
      ds.updateRows(3, Map(1L -> RoaringBitmap.bitmapOf(7)), schema, IndexedSeq.empty, IndexedSeq(fragment(1)), "u2")
    )
    assert(e2.getMessage.contains("same fragments"), e2.getMessage)
    assert(ds.deleteRows(3, Map(3L -> RoaringBitmap.bitmapOf(0)), "elsewhere")._2.get.version == 5)
    assert(ds.commit(3, Operation.Append(schema, IndexedSeq(fragment(4)))).version == 6)
    val compact = intercept[FermionCommitConflictException](
      ds.commit(3, Operation.Compact(Set(1L), IndexedSeq(fragment(7))))
    )
    assert(compact.getMessage.contains("deleted rows of fragments this compaction rewrites"), compact.getMessage)
    val after = ds.latest().get
    assert(after.version == 6 && after.rowCount == 8 - 1 + 22 - 1 + 1 + 1 + 4)
  }

  test("an application's steps commit once: replays are skipped, a concurrent run of the same step conflicts") {
    val ds = newDataset()
    def append(rows: Long) = Operation.Append(schema, IndexedSeq(fragment(rows)))
    assert(ds.commitStep(append(1), "q1", 0).map(_.version).contains(1L), "the first step creates the dataset")
    assert(ds.commitStep(append(1), "q1", 0).isEmpty, "a replayed step commits nothing")
    assert(ds.commitStep(append(2), "q1", 1).map(_.version).contains(2L))
    ds.commit(2, append(3)) // another writer: the application's progress stays recorded
    assert(ds.commitStep(append(2), "q1", 1).isEmpty && ds.commitStep(append(2), "q1", 0).isEmpty)
    assert(ds.commitStep(append(4), "q2", 0).map(_.version).contains(4L), "applications are independent")
    val latest = ds.latest().get
    assert(FermionDataset.appVersion(latest, "q1").contains(1L) && FermionDataset.appVersion(latest, "q2").contains(0L))
    assert(latest.rowCount == 1 + 2 + 3 + 4)
    // A run that read version 2 and commits step 1 of q1 again (the other run committed it meanwhile).
    val e = intercept[FermionCommitConflictException](
      ds.commit(1, append(9), Map(FermionDataset.AppVersionPrefix + "q1" -> "1"))
    )
    assert(e.getMessage.contains("committed step 1 of application q1"), e.getMessage)
    assert(ds.latest().get.rowCount == 10)
  }

  test("a missing transaction file of a newer version is a conflict") {
    val ds = newDataset()
    ds.commit(0, Operation.Append(schema, IndexedSeq(fragment(1))))
    val v2 = ds.commit(1, Operation.Append(schema, IndexedSeq(fragment(1))))
    ds.fs.delete(new Path(DatasetLayout.transactions(ds.root), v2.transactionFile), false)
    val e = intercept[FermionCommitConflictException](ds.commit(1, Operation.Append(schema, IndexedSeq(fragment(1)))))
    assert(e.getMessage.contains("transaction file"))
    assert(ds.commit(2, Operation.Append(schema, IndexedSeq(fragment(1)))).version == 3)
  }

  test("deletion files: arrow arrays for few rows, roaring bitmaps for many") {
    val ds = newDataset()
    for (rows <- Seq(Seq(0, 5, 7), (0 until 5000 by 3), Seq.empty[Int], Seq(Int.MaxValue - 1))) {
      val bitmap = RoaringBitmap.bitmapOf(rows: _*)
      val d = ds.writeDeletionFile(1, 3, bitmap)
      assert(d.kind == (if (rows.size <= DeletionFiles.ArrowArrayMaxRows) DeletionFile.ArrowArray
                        else DeletionFile.RoaringBitmap))
      assert(d.deletedRows == rows.size && ds.readDeletionFile(d) == bitmap)
    }
  }
}
