package io.fermion.core.encoding

/** Assigns dense codes to distinct long values in order of first appearance (open addressing,
  * linear probing). Gives up once more than `maxEntries` distinct values appear: a dictionary that
  * large no longer pays, and the table stays small. */
final private[core] class LongDictionaryBuilder {
  private var keys = new Array[Long](1024)
  private var codes = new Array[Int](1024) // code + 1; 0 marks an empty slot
  private var values = new Array[Long](256)
  private var count = 0

  def size: Int = count

  /** The distinct values, indexed by code. */
  def entries: Array[Long] = values

  def reset(expected: Int): Unit = {
    val cap = Integer.highestOneBit(math.max(16, expected * 2 - 1)) << 1
    if (keys.length < cap || keys.length > cap * 8) { keys = new Array[Long](cap); codes = new Array[Int](cap) }
    else java.util.Arrays.fill(codes, 0)
    count = 0
  }

  /** The code of `v`, adding it if new; -1 once the dictionary would exceed `maxEntries`. */
  def codeOf(v: Long, maxEntries: Int): Int = {
    val mask = keys.length - 1
    var h = LongDictionaryBuilder.mix(v) & mask
    while (true) {
      val c = codes(h)
      if (c == 0) {
        if (count >= maxEntries) return -1
        if ((count + 1) * 2 > keys.length) { grow(); return codeOf(v, maxEntries) }
        keys(h) = v; codes(h) = count + 1
        if (count == values.length) values = java.util.Arrays.copyOf(values, count * 2)
        values(count) = v
        count += 1
        return count - 1
      }
      if (keys(h) == v) return c - 1
      h = (h + 1) & mask
    }
    -1
  }

  private def grow(): Unit = {
    val oldKeys = keys; val oldCodes = codes
    keys = new Array[Long](oldKeys.length * 2); codes = new Array[Int](oldKeys.length * 2)
    val mask = keys.length - 1
    var i = 0
    while (i < oldKeys.length) {
      if (oldCodes(i) != 0) {
        var h = LongDictionaryBuilder.mix(oldKeys(i)) & mask
        while (codes(h) != 0) h = (h + 1) & mask
        keys(h) = oldKeys(i); codes(h) = oldCodes(i)
      }
      i += 1
    }
  }
}

private[core] object LongDictionaryBuilder {
  def mix(v: Long): Int = {
    var h = v * 0x9e3779b97f4a7c15L
    h ^= h >>> 32
    h.toInt
  }
}

/** The same for byte strings, referenced as slices of one array (the page's bytes). */
final private[core] class BytesDictionaryBuilder {
  private var slots = new Array[Int](1024) // code + 1; 0 marks an empty slot
  private var hashes = new Array[Int](1024)
  private var starts = new Array[Int](256)
  private var lens = new Array[Int](256)
  private var count = 0
  private var src: Array[Byte] = Array.emptyByteArray

  def size: Int = count
  def entryStart(code: Int): Int = starts(code)
  def entryLength(code: Int): Int = lens(code)

  def reset(bytes: Array[Byte], expected: Int): Unit = {
    src = bytes
    val cap = Integer.highestOneBit(math.max(16, expected * 2 - 1)) << 1
    if (slots.length < cap || slots.length > cap * 8) { slots = new Array[Int](cap); hashes = new Array[Int](cap) }
    else java.util.Arrays.fill(slots, 0)
    count = 0
  }

  def codeOf(start: Int, len: Int, maxEntries: Int): Int = {
    val hash = BytesDictionaryBuilder.hash(src, start, len)
    val mask = slots.length - 1
    var h = hash & mask
    while (true) {
      val c = slots(h)
      if (c == 0) {
        if (count >= maxEntries) return -1
        if ((count + 1) * 2 > slots.length) { grow(); return codeOf(start, len, maxEntries) }
        slots(h) = count + 1; hashes(h) = hash
        if (count == starts.length) {
          starts = java.util.Arrays.copyOf(starts, count * 2); lens = java.util.Arrays.copyOf(lens, count * 2)
        }
        starts(count) = start; lens(count) = len
        count += 1
        return count - 1
      }
      if (
        hashes(h) == hash && lens(c - 1) == len &&
        java.util.Arrays.equals(src, starts(c - 1), starts(c - 1) + len, src, start, start + len)
      ) return c - 1
      h = (h + 1) & mask
    }
    -1
  }

  private def grow(): Unit = {
    val oldSlots = slots; val oldHashes = hashes
    slots = new Array[Int](oldSlots.length * 2); hashes = new Array[Int](oldSlots.length * 2)
    val mask = slots.length - 1
    var i = 0
    while (i < oldSlots.length) {
      if (oldSlots(i) != 0) {
        var h = oldHashes(i) & mask
        while (slots(h) != 0) h = (h + 1) & mask
        slots(h) = oldSlots(i); hashes(h) = oldHashes(i)
      }
      i += 1
    }
  }
}

private[core] object BytesDictionaryBuilder {
  def hash(b: Array[Byte], start: Int, len: Int): Int = {
    var h = 0x811c9dc5
    var i = start
    val end = start + len
    while (i + 4 <= end) {
      h = (h ^ ((b(i) & 0xff) | (b(i + 1) & 0xff) << 8 | (b(i + 2) & 0xff) << 16 | b(i + 3) << 24)) * 0x01000193
      i += 4
    }
    while (i < end) { h = (h ^ (b(i) & 0xff)) * 0x01000193; i += 1 }
    h ^ (h >>> 16) ^ len
  }
}
