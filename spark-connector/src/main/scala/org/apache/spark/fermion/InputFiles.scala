package org.apache.spark.fermion

import org.apache.spark.rdd.InputFileBlockHolder

/** What `input_file_name()`, `input_file_block_start()` and `input_file_block_length()` return
  * for the rows a task reads. Spark keeps that in a holder private to its own packages (its file
  * sources set it), hence this bridge in Spark's namespace. */
object InputFiles {
  def set(path: String, start: Long, length: Long): Unit = InputFileBlockHolder.set(path, start, length)
  def unset(): Unit = InputFileBlockHolder.unset()
}
