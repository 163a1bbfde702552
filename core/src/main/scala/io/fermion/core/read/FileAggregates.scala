package io.fermion.core.read

import io.fermion.core.errors.InvalidFermionFileException
import io.fermion.core.layout.{DescType, FileLayout, StreamType, ValueStats}
import io.fermion.core.schema.FermionType

/** Aggregates answered from a file's metadata alone (footer, stripe directory, CMB statistics):
  * row count, non-null count and min/max of a column whose statistics are exact (integers,
  * booleans, dates, timestamps, decimals up to 18 digits). No data page is read. */
private[core] object FileAggregates {

  /** Types whose stored min/max are exact values in the int64 domain. */
  def exactMinMax(t: FermionType): Boolean = t match {
    case FermionType.Bool | FermionType.Int8 | FermionType.Int16 | FermionType.Int32 | FermionType.Int64 |
        FermionType.Date32 | FermionType.Timestamp(_) => true
    case d: FermionType.Decimal => d.storedWidth == 8
    case _ => false
  }

  def rowCount(reader: FermionFileReader): Long = reader.numRows

  /** Non-null values of a flat top-level column: rows minus the null count each stripe's CMB
    * records (the DATA chunk's `nullCount`), or, where the CMB records none (a string column of
    * only empty strings and nulls has OFFSETS and DATA as USE_DEFAULT, docs/format.md 6.3), the
    * set bits of the stripe's VALIDITY chunk, which is then the one chunk read. */
  def nonNullCount(reader: FermionFileReader, column: Int): Long = reader.columnMetadata(column) match {
    case None => 0L
    case Some(m) =>
      val data = m.streamTypeIndexOf(StreamType.Data)
      (0 until reader.numStripes).map { s =>
        val rows = reader.stripes.rowCount(s).toLong
        m.descType(0) match {
          case DescType.UseDefault => rows
          case DescType.ForceNull => 0L
          case _ =>
            val len = m.simpleLength(0, s)
            if (len == 0) rows
            else if (len == FileLayout.AllNullChunkLength) 0L
            else if (data >= 0 && m.descType(data) == DescType.Full) {
              val nulls = m.fullNullCount(data, s).toLong
              if (nulls < 0 || nulls > rows)
                throw new InvalidFermionFileException(
                  reader.path,
                  m.fullOffset(data, s),
                  s"CMB of column `${reader.field(column).name}` counts $nulls nulls in stripe $s of $rows rows"
                )
              rows - nulls
            } else reader.validityCount(column, s)
        }
      }.sum
  }

  /** (min, max) over all non-null values, or None when the column has none. */
  def minMax(reader: FermionFileReader, column: Int): Option[(Long, Long)] = {
    require(
      exactMinMax(reader.field(column).dataType),
      s"${reader.field(column).dataType} has no exact min/max"
    )
    reader.columnMetadata(column).flatMap { m =>
      val data = m.streamTypeIndexOf(StreamType.Data)
      if (data < 0 || m.descType(data) != DescType.Full) None
      else (0 until reader.numStripes).flatMap { s =>
        val st = ValueStats(m.fullStatsFlags(data, s), m.fullMin(data, s), m.fullMax(data, s))
        if (m.fullLength(data, s) > 0 && st.usableBounds) Some(st) else None
      }.reduceOption(_ merge _).map(st => (st.min, st.max))
    }
  }
}
