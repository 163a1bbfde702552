package io.fermion.spark

import java.io.{ObjectInputStream, ObjectOutputStream}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.broadcast.Broadcast

/** Ships the driver's Hadoop configuration (file-system credentials and settings) to executors;
  * Configuration itself is not Java-serialisable. */
final class SerializableHadoopConf(@transient var value: Configuration) extends Serializable {
  private def writeObject(out: ObjectOutputStream): Unit = { out.defaultWriteObject(); value.write(out) }
  private def readObject(in: ObjectInputStream): Unit = {
    in.defaultReadObject()
    value = new Configuration(false)
    value.readFields(in)
  }
}

object SerializableHadoopConf {

  /** The last configuration broadcast: its SparkContext, its entries, and the broadcast. */
  private var last: (org.apache.spark.SparkContext, Map[String, String], Broadcast[SerializableHadoopConf]) = _

  /** The session's Hadoop configuration, shipped once per executor instead of with every task
    * (deserialising a Configuration costs milliseconds; as Spark's file sources do). A scan or write
    * whose configuration has the same entries as the last one broadcast, in the same SparkContext,
    * reuses that broadcast: serialising and compressing a Configuration cost each query about 6 ms
    * of the driver's time (TPC-H Q6 at sf1), more than comparing its entries. What is broadcast is a
    * copy, so that the session's configuration changing later cannot change what tasks read. */
  def broadcast(conf: SerializableHadoopConf = new SerializableHadoopConf(FermionTableSchema.hadoopConf()))
      : Broadcast[SerializableHadoopConf] = {
    val sc = org.apache.spark.sql.SparkSession.active.sparkContext
    val entries = conf.value.iterator().asScala.map(e => e.getKey -> e.getValue).toMap
    synchronized {
      last match {
        case (context, seen, b) if (context eq sc) && !sc.isStopped && seen == entries => b
        case _ =>
          val b = sc.broadcast(new SerializableHadoopConf(new Configuration(conf.value)))
          last = (sc, entries, b)
          b
      }
    }
  }
}
