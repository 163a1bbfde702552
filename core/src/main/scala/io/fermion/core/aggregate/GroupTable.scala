package io.fermion.core.aggregate

import io.fermion.core.schema.FermionType
import org.apache.arrow.memory.util.MemoryUtil
import org.apache.arrow.vector.{BaseVariableWidthVector, FieldVector}

/** The groups seen so far and their key values: each row of a batch is given its group's number
  * (0, 1, ... in order of first appearance), a new group made for a key not seen before. One open
  * addressing table of group numbers, probed by the hash of a row's keys; keys are compared column
  * by column. A row with the previous row's key takes its group without probing: sorted or
  * clustered keys (TPC-H's `l_orderkey`) rarely hash at all. */
final private[aggregate] class GroupTable(types: IndexedSeq[FermionType]) {
  private val keys: Array[KeyColumn] = types.map(KeyColumn.of).toArray
  private var table = new Array[Int](1024) // group + 1; 0 is an empty slot
  private var hashes = new Array[Int](256)
  private var groups = 0

  def size: Int = groups

  /** The group of each of `rows` rows of `columns` (the key columns' values), into `out`. */
  def assign(columns: IndexedSeq[Values], rows: Int, out: Array[Int]): Unit = {
    var k = 0
    while (k < keys.length) { keys(k).bind(columns(k)); k += 1 }
    if (keys.isEmpty) {
      if (groups == 0 && rows > 0) groups = 1
      java.util.Arrays.fill(out, 0, rows, 0)
      return
    }
    var previous = -1
    var r = 0
    while (r < rows) {
      out(r) =
        if (previous >= 0 && sameAsPrevious(r)) previous
        else find(r)
      previous = out(r)
      r += 1
    }
  }

  private def sameAsPrevious(r: Int): Boolean = {
    var k = 0
    while (k < keys.length) { if (!keys(k).sameRows(r - 1, r)) return false; k += 1 }
    true
  }

  private def hashOf(r: Int): Int = {
    var h = 0
    var k = 0
    while (k < keys.length) { h = h * 31 + keys(k).hash(r); k += 1 }
    // Spread the bits: the table's index takes the low ones.
    h ^ (h >>> 16) ^ (h >>> 7)
  }

  private def find(r: Int): Int = {
    val h = hashOf(r)
    val mask = table.length - 1
    var slot = h & mask
    while (true) {
      val g = table(slot) - 1
      if (g < 0) return add(r, h, slot)
      if (hashes(g) == h && matches(r, g)) return g
      slot = (slot + 1) & mask
    }
    -1
  }

  private def matches(r: Int, g: Int): Boolean = {
    var k = 0
    while (k < keys.length) { if (!keys(k).sameAsGroup(r, g)) return false; k += 1 }
    true
  }

  private def add(r: Int, h: Int, slot: Int): Int = {
    val g = groups
    if (g == hashes.length) hashes = java.util.Arrays.copyOf(hashes, g * 2)
    hashes(g) = h
    var k = 0
    while (k < keys.length) { keys(k).append(r); k += 1 }
    table(slot) = g + 1
    groups += 1
    if (groups * 2 > table.length) grow()
    g
  }

  private def grow(): Unit = {
    table = new Array[Int](table.length * 2)
    val mask = table.length - 1
    var g = 0
    while (g < groups) {
      var slot = hashes(g) & mask
      while (table(slot) != 0) slot = (slot + 1) & mask
      table(slot) = g + 1
      g += 1
    }
  }

  /** Writes key column `k` of group `g` into row `row` of `v` (made for the column's type). */
  def write(k: Int, g: Int, v: FieldVector, row: Int): Unit = keys(k).write(g, v, row)
}

/** The key values of one group column: those of the current batch, and those of every group. */
abstract private class KeyColumn {
  protected var values: Values = _
  def bind(v: Values): Unit = values = v
  def hash(r: Int): Int
  def sameRows(a: Int, b: Int): Boolean
  def sameAsGroup(r: Int, g: Int): Boolean
  def append(r: Int): Unit
  def write(g: Int, v: FieldVector, row: Int): Unit
}

private object KeyColumn {
  private val NullHash = 0x5bd1e995

  /** [[BytesKey]]'s codes for a null and for a value of more than 7 bytes (a short value's code
    * has its length, at most 7, in the top byte). */
  private val NullCode = 0xffL << 56
  private val LongValue = 0xfeL << 56

  def of(t: FermionType): KeyColumn =
    if (FermionType.isVariableWidth(t)) new BytesKey
    else t match {
      case FermionType.Decimal(p, _) if p > 18 => new WideKey
      case _ => new LongKey
    }

  private def mix(v: Long): Int = { val x = v * 0x9e3779b97f4a7c15L; (x ^ (x >>> 32)).toInt }

  /** Integers, dates, timestamps, booleans and decimals of up to 18 digits. */
  final private class LongKey extends KeyColumn {
    private var keys = new Array[Long](256)
    private var nulls = new Array[Boolean](256)
    private var n = 0

    def hash(r: Int): Int = if (values.isNull(r)) NullHash else mix(values.longs(r))
    def sameRows(a: Int, b: Int): Boolean =
      if (values.isNull(a)) values.isNull(b) else !values.isNull(b) && values.longs(a) == values.longs(b)
    def sameAsGroup(r: Int, g: Int): Boolean =
      if (nulls(g)) values.isNull(r) else !values.isNull(r) && values.longs(r) == keys(g)
    def append(r: Int): Unit = {
      if (n == keys.length) {
        keys = java.util.Arrays.copyOf(keys, n * 2); nulls = java.util.Arrays.copyOf(nulls, n * 2)
      }
      nulls(n) = values.isNull(r)
      if (!nulls(n)) keys(n) = values.longs(r)
      n += 1
    }
    def write(g: Int, v: FieldVector, row: Int): Unit =
      if (nulls(g)) VectorWrites.setNull(v, row) else VectorWrites.setLong(v, row, keys(g))
  }

  /** Decimals of more than 18 digits, kept exact. */
  final private class WideKey extends KeyColumn {
    private val keys = scala.collection.mutable.ArrayBuffer.empty[java.math.BigInteger]
    def hash(r: Int): Int = if (values.isNull(r)) NullHash else values.bigAt(r).hashCode
    def sameRows(a: Int, b: Int): Boolean =
      if (values.isNull(a)) values.isNull(b) else !values.isNull(b) && values.bigAt(a) == values.bigAt(b)
    def sameAsGroup(r: Int, g: Int): Boolean =
      if (keys(g) == null) values.isNull(r) else !values.isNull(r) && values.bigAt(r) == keys(g)
    def append(r: Int): Unit = keys += (if (values.isNull(r)) null else values.bigAt(r))
    def write(g: Int, v: FieldVector, row: Int): Unit =
      if (keys(g) == null) VectorWrites.setNull(v, row) else VectorWrites.setBig(v, row, keys(g))
  }

  /** Strings and binary, by their bytes. A value of at most 7 bytes is also one 64-bit code (its
    * bytes and its length), so that short keys (TPC-H's flags) compare and hash as integers; longer
    * ones share one code and compare byte by byte. */
  final private class BytesKey extends KeyColumn {
    private var data = new Array[Byte](4096)
    private var starts = new Array[Int](257) // group g's bytes are data(starts(g) until starts(g + 1))
    private var groupCodes = new Array[Long](256)
    private var n = 0
    private var offsets = 0L
    private var bytes = 0L
    private var rowOf: Array[Int] = _
    private var codes = new Array[Long](0)

    override def bind(v: Values): Unit = {
      super.bind(v)
      val vw: BaseVariableWidthVector = v.bytes
      offsets = vw.getOffsetBufferAddress
      bytes = vw.getDataBufferAddress
      rowOf = v.rowOf
      if (codes.length < v.rows) codes = new Array[Long](v.rows)
      var r = 0
      while (r < v.rows) { codes(r) = codeOf(r); r += 1 }
    }

    private def slot(r: Int): Long = offsets + 4L * (if (rowOf == null) r else rowOf(r))
    private def start(r: Int): Int = MemoryUtil.getInt(slot(r))
    private def length(r: Int): Int = { val at = slot(r); MemoryUtil.getInt(at + 4) - MemoryUtil.getInt(at) }

    private def codeOf(r: Int): Long =
      if (values.isNull(r)) NullCode
      else {
        val at = slot(r)
        val from = MemoryUtil.getInt(at)
        val len = MemoryUtil.getInt(at + 4) - from
        if (len > 7) LongValue
        else {
          var c = len.toLong << 56
          var i = 0
          while (i < len) { c |= (MemoryUtil.getByte(bytes + from + i) & 0xffL) << (8 * i); i += 1 }
          c
        }
      }

    def hash(r: Int): Int =
      if (codes(r) != LongValue) mix(codes(r))
      else {
        val at = bytes + start(r)
        val len = length(r)
        var h = len
        var i = 0
        while (i + 8 <= len) { h = h * 31 + mix(MemoryUtil.getLong(at + i)); i += 8 }
        while (i < len) { h = h * 31 + MemoryUtil.getByte(at + i); i += 1 }
        h
      }

    def sameRows(a: Int, b: Int): Boolean = {
      val (ca, cb) = (codes(a), codes(b))
      if (ca != LongValue || cb != LongValue) ca == cb
      else {
        val len = length(a)
        len == length(b) && {
          val (x, y) = (bytes + start(a), bytes + start(b))
          var i = 0
          while (i < len && MemoryUtil.getByte(x + i) == MemoryUtil.getByte(y + i)) i += 1
          i == len
        }
      }
    }

    def sameAsGroup(r: Int, g: Int): Boolean = {
      val c = codes(r)
      if (c != LongValue || groupCodes(g) != LongValue) c == groupCodes(g)
      else {
        val len = length(r)
        len == starts(g + 1) - starts(g) && {
          val at = bytes + start(r)
          val from = starts(g)
          var i = 0
          while (i < len && MemoryUtil.getByte(at + i) == data(from + i)) i += 1
          i == len
        }
      }
    }

    def append(r: Int): Unit = {
      if (n == groupCodes.length) {
        groupCodes = java.util.Arrays.copyOf(groupCodes, n * 2)
        starts = java.util.Arrays.copyOf(starts, n * 2 + 1)
      }
      groupCodes(n) = codes(r)
      val len = if (codes(r) == NullCode) 0 else length(r)
      val end = starts(n).toLong + len
      if (end > Int.MaxValue - 16) throw new IllegalStateException("group keys of one task exceed 2 GiB")
      if (end > data.length)
        data = java.util.Arrays.copyOf(data, math.max(end, math.min(Int.MaxValue - 16L, data.length * 2L)).toInt)
      if (len > 0) MemoryUtil.copyFromMemory(bytes + start(r), data, starts(n).toLong, len.toLong)
      starts(n + 1) = end.toInt
      n += 1
    }

    def write(g: Int, v: FieldVector, row: Int): Unit =
      if (groupCodes(g) == NullCode) VectorWrites.setNull(v, row)
      else v.asInstanceOf[BaseVariableWidthVector].setSafe(row, data, starts(g), starts(g + 1) - starts(g))
  }
}
