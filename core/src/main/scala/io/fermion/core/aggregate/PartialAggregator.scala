package io.fermion.core.aggregate

import java.util.Locale

import io.fermion.core.schema.{ArrowSchemaMapping, FermionField}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.FieldVector

/** Computes an [[Aggregation]] over batches of rows: each batch's group keys and function inputs
  * are read from its Arrow vectors, rows are given their groups, and each function's running
  * result is updated column-wise. [[result]] returns the partial results as Arrow vectors: the
  * group columns, then one per function, at most `rowsPerBatch` rows per batch.
  * {{{
  * val agg = new PartialAggregator(aggregation, scan.fields.map(_.name))
  * val reader = new ScanTaskReader(scan.plan, task, conf, allocator)
  * try while (reader.next()) agg.add(i => reader.batch.vector(i), reader.batch.numRows) finally reader.close()
  * agg.result(allocator).foreach { vectors => ...; vectors.foreach(_.close()) }
  * }}}
  * Every rule of the arithmetic is [[ValueExpr]]'s; sums that leave their input's type come back
  * in parts (see [[AggregateFunction.Sum]]). */
final class PartialAggregator(aggregation: Aggregation, columnNames: IndexedSeq[String]) {
  Aggregation.check(aggregation).foreach(why => throw new IllegalArgumentException(s"cannot aggregate: $why"))

  private val index: Map[String, Int] =
    columnNames.zipWithIndex.map { case (n, i) => n.toLowerCase(Locale.ROOT) -> i }.toMap
  private def position(name: String): Int =
    index.getOrElse(name.toLowerCase(Locale.ROOT), throw new IllegalArgumentException(s"no column $name to aggregate"))
  aggregation.columns.foreach(position)

  private val groups = new GroupTable(aggregation.groupBy.map(_.dataType))
  private val accumulators = aggregation.functions.map(Accumulator.of)
  private val evaluator = new ValueEvaluator(aggregation.overflow)
  private var groupOf = new Array[Int](0)

  /** Rows aggregated so far. */
  var rowsAdded: Long = 0L

  /** Adds the rows `selection` (sorted; null: all `rows`) of vectors of `rows` rows, whose columns
    * (in `columnNames`' order) `vector` gives. */
  def add(vector: Int => FieldVector, rows: Int, selection: Array[Int] = null): Unit = {
    val n = if (selection == null) rows else selection.length
    if (n == 0) return
    evaluator.reset()
    val columns = scala.collection.mutable.HashMap.empty[String, Values]
    def column(name: String): Values = columns.getOrElseUpdate(
      name.toLowerCase(Locale.ROOT), {
        val e = (aggregation.groupBy.iterator ++ aggregation.functions.iterator.flatMap(inputColumns))
          .collectFirst { case c: ValueExpr.Column if c.name.equalsIgnoreCase(name) => c }.get
        Values.of(vector(position(name)), e.dataType, rows, selection)
      }
    )
    if (groupOf.length < n) groupOf = new Array[Int](n)
    groups.assign(aggregation.groupBy.map(c => column(c.name)), n, groupOf)
    accumulators.foreach(_.reserve(groups.size))
    aggregation.functions.zip(accumulators).foreach { case (f, acc) =>
      val values = input(f).map(e => evaluator.input(e, column, n)).orNull
      acc.add(groupOf, n, values)
    }
    rowsAdded += n
  }

  private def input(f: AggregateFunction): Option[ValueExpr] = f match {
    case AggregateFunction.CountRows => None
    case AggregateFunction.Count(e) => Some(e)
    case AggregateFunction.Sum(e) => Some(e)
    case AggregateFunction.Min(e) => Some(e)
    case AggregateFunction.Max(e) => Some(e)
  }

  private def inputColumns(f: AggregateFunction): Iterator[ValueExpr] = {
    def walk(e: ValueExpr): Iterator[ValueExpr] = e match {
      case c: ValueExpr.Column => Iterator(c)
      case _: ValueExpr.Literal => Iterator.empty
      case ValueExpr.Arithmetic(_, l, r, _) => walk(l) ++ walk(r)
      case ValueExpr.Negate(c, _) => walk(c)
      case ValueExpr.Cast(c, _) => walk(c)
    }
    input(f).iterator.flatMap(walk)
  }

  /** Groups so far. */
  def groupCount: Int = groups.size

  /** The partial results, as batches of at most `rowsPerBatch` rows, each the group columns then
    * one vector per function (of [[Aggregation.outputTypes]]). Without GROUP BY, an aggregation of
    * no rows still has its one row (counts 0, the rest null). The caller closes the vectors. */
  def result(allocator: BufferAllocator, rowsPerBatch: Int = 1 << 16): Iterator[IndexedSeq[FieldVector]] = {
    val total = math.max(groups.size, if (aggregation.groupBy.isEmpty) 1 else 0)
    accumulators.foreach(_.reserve(total))
    val types = aggregation.outputTypes
    // (group, part) of each output row, made batch by batch.
    var g = 0
    var part = 0
    var partsOfG = -1
    new Iterator[IndexedSeq[FieldVector]] {
      def hasNext: Boolean = g < total
      def next(): IndexedSeq[FieldVector] = {
        val vectors = types.zipWithIndex.map { case (t, i) =>
          ArrowSchemaMapping.toArrowField(FermionField(s"agg$i", -1, t, nullable = true)).createVector(allocator)
        }
        try {
          vectors.foreach { v => v.setInitialCapacity(math.min(rowsPerBatch, total - g)); v.allocateNew() }
          var row = 0
          while (row < rowsPerBatch && g < total) {
            if (partsOfG < 0) partsOfG = accumulators.foldLeft(1)((m, a) => math.max(m, a.parts(g)))
            var k = 0
            while (k < aggregation.groupBy.size) { groups.write(k, g, vectors(k), row); k += 1 }
            var f = 0
            while (f < accumulators.size) { accumulators(f).write(g, part, vectors(k + f), row); f += 1 }
            row += 1
            part += 1
            if (part == partsOfG) { g += 1; part = 0; partsOfG = -1 }
          }
          vectors.foreach(_.setValueCount(row))
          vectors
        } catch { case t: Throwable => vectors.foreach(_.close()); throw t }
      }
    }
  }
}
