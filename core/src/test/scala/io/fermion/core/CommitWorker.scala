package io.fermion.core

import io.fermion.core.dataset._
import io.fermion.core.schema.{FermionField, FermionSchema, FermionType}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** A writer process of the commit-protocol suites: `CommitWorker <root> <worker> <appends>
  * [key=value ...]` commits `appends` appends of one fragment each (`data/w<worker>-<i>.fermion`,
  * one row) and prints `committed <file> <version>` after each; `appends` = -1 commits until
  * killed. Hadoop settings come as key=value arguments. Run in its own JVM, so that the writers
  * share nothing but the file system. */
object CommitWorker {
  val schema: FermionSchema = FermionSchema(IndexedSeq(FermionField("id", 1, FermionType.Int64, nullable = false)))

  def fragment(file: String): Fragment = Fragment(0, 1, IndexedSeq(DataFile(file, IndexedSeq(1))), None)

  def conf(settings: Seq[String]): Configuration = {
    val c = new Configuration()
    settings.foreach { kv =>
      val i = kv.indexOf('='); c.set(kv.substring(0, i), kv.substring(i + 1))
    }
    c
  }

  def main(args: Array[String]): Unit = {
    val Array(root, worker, appends) = args.take(3)
    val ds = new FermionDataset(new Path(root), conf(args.drop(3).toSeq))
    var i = 0
    while (appends.toInt < 0 || i < appends.toInt) {
      val file = s"data/w$worker-$i.fermion"
      val read = ds.latestVersion().getOrElse(0L)
      val m = ds.commit(read, Operation.Append(schema, IndexedSeq(fragment(file))))
      println(s"committed $file ${m.version}")
      System.out.flush()
      i += 1
    }
  }
}

/** An external store that loses the answer of its first successful put, as a store (or the network
  * in front of it) can: the entry is made, the writer hears "no". The commit must recognise its own
  * manifest instead of committing the operation a second time. */
final class LostAnswerManifestStore(conf: Configuration) extends ExternalManifestStore {
  private val inner = new FileSystemManifestStore(conf)
  def putIfAbsent(dataset: String, key: String, location: String): Boolean = {
    val created = inner.putIfAbsent(dataset, key, location)
    if (created && key.startsWith(DatasetLayout.VersionsDir) && LostAnswerManifestStore.lose.getAndSet(false)) false
    else created
  }
  def get(dataset: String, key: String): Option[String] = inner.get(dataset, key)
  def delete(dataset: String, key: String): Boolean = inner.delete(dataset, key)
  def latestVersion(dataset: String): Option[Long] = inner.latestVersion(dataset)
}

object LostAnswerManifestStore {
  val lose = new java.util.concurrent.atomic.AtomicBoolean(false)
}
