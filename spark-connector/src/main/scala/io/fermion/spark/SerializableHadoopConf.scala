package io.fermion.spark

import java.io.{ObjectInputStream, ObjectOutputStream}

import org.apache.hadoop.conf.Configuration

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

  /** The session's Hadoop configuration, shipped once per executor instead of with every task
    * (deserialising a Configuration costs milliseconds; as Spark's file sources do). */
  def broadcast(conf: SerializableHadoopConf = new SerializableHadoopConf(FermionTableSchema.hadoopConf()))
      : org.apache.spark.broadcast.Broadcast[SerializableHadoopConf] =
    org.apache.spark.sql.SparkSession.active.sparkContext.broadcast(conf)
}
