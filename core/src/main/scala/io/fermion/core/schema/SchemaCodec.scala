package io.fermion.core.schema

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets
import scala.collection.mutable.ArrayBuffer

/** The schema's byte form: a count of top-level fields, then every node in preorder
  * (docs/format.md, "Schema"):
  * {{{
  * u8 typeId | u8 flags (bit0 nullable) | u16 nameLength | i32 fieldId | name (UTF-8)
  * | params: timestamp: u8 utcAdjusted; decimal: u8 precision, u8 scale; struct: u32 numChildren
  * }}}
  * List nodes are followed by their element node, map nodes by their key and value nodes.
  * Compact and flat so that a 10,000-column schema decodes in one linear pass.
  */
private[core] object SchemaCodec {
  def encode(schema: FermionSchema): Array[Byte] = encodeWithNodeStarts(schema)._1

  /** The schema's bytes and where each top-level node starts in them, plus their end: the node of
    * column `c` with its descendants is `[starts(c), starts(c + 1))` (what the column directory
    * records, format 1.5). */
  def encodeWithNodeStarts(schema: FermionSchema): (Array[Byte], Array[Int]) = {
    val starts = new Array[Int](schema.fields.size + 1)
    val out = new java.io.ByteArrayOutputStream()
    val tmp = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN)
    def putInt(v: Int): Unit = { tmp.clear(); tmp.putInt(v); out.write(tmp.array(), 0, 4) }
    def node(f: FermionField): Unit = {
      val name = f.name.getBytes(StandardCharsets.UTF_8)
      require(name.length <= 0xffff, s"field name of ${name.length} bytes is too long")
      out.write(f.dataType.id)
      out.write(if (f.nullable) 1 else 0)
      out.write(name.length & 0xff); out.write(name.length >>> 8)
      putInt(f.fieldId)
      out.write(name)
      f.dataType match {
        case FermionType.Timestamp(utc) => out.write(if (utc) 1 else 0)
        case FermionType.Decimal(p, s) => out.write(p); out.write(s)
        case FermionType.Struct => putInt(f.children.size)
        case _ =>
      }
      val expectedChildren = f.dataType match {
        case FermionType.List => Some(1)
        case FermionType.Map => Some(2)
        case FermionType.Struct => None
        case _ => Some(0)
      }
      expectedChildren.foreach(n =>
        require(f.children.size == n, s"${f.dataType} field `${f.name}` must have $n children, has ${f.children.size}")
      )
      f.children.foreach(node)
    }
    putInt(schema.fields.size)
    schema.fields.indices.foreach { c => starts(c) = out.size(); node(schema.fields(c)) }
    starts(schema.fields.size) = out.size()
    (out.toByteArray, starts)
  }

  /** Decodes a schema; throws IllegalArgumentException with the byte position on malformed input
    * (the reader wraps it into an InvalidFermionFileException naming the file). */
  def decode(bytes: ByteBuffer): FermionSchema = {
    val b = bytes.slice().order(ByteOrder.LITTLE_ENDIAN)
    if (b.remaining() < 4) throw new IllegalArgumentException("schema ends early at byte 0")
    val n = b.getInt()
    if (n < 0) throw new IllegalArgumentException(s"negative column count $n")
    val fields = new ArrayBuffer[FermionField](math.min(n, b.remaining() / 8 + 1)) // a node takes >= 8 bytes
    var i = 0
    while (i < n) { fields += node(b); i += 1 }
    if (b.remaining() != 0)
      throw new IllegalArgumentException(s"${b.remaining()} bytes left after the last schema node")
    FermionSchema(fields.toIndexedSeq)
  }

  /** Decodes exactly one top-level node and its descendants (a column's bytes as the column
    * directory locates them, format 1.5); the bytes must hold nothing else. */
  def decodeField(bytes: ByteBuffer): FermionField = {
    val b = bytes.slice().order(ByteOrder.LITTLE_ENDIAN)
    val f = node(b)
    if (b.remaining() != 0) throw new IllegalArgumentException(s"${b.remaining()} bytes left after the column's node")
    f
  }

  /** One node and its descendants at `b`'s position (depth 0). */
  private def node(b: ByteBuffer): FermionField = {
    def need(n: Int): Unit =
      if (b.remaining() < n) throw new IllegalArgumentException(s"schema ends early at byte ${b.position()}")
    def node(depth: Int): FermionField = {
      if (depth > 1000) throw new IllegalArgumentException("schema nesting deeper than 1000")
      need(8)
      val typeId = b.get() & 0xff
      val nullable = (b.get() & 1) != 0
      val nameLen = b.getShort() & 0xffff
      val fieldId = b.getInt()
      need(nameLen)
      val nameBytes = new Array[Byte](nameLen)
      b.get(nameBytes)
      val name = new String(nameBytes, StandardCharsets.UTF_8)
      def leaf(t: FermionType) = FermionField(name, fieldId, t, nullable)
      typeId match {
        case 0 => leaf(FermionType.Bool)
        case 1 => leaf(FermionType.Int8)
        case 2 => leaf(FermionType.Int16)
        case 3 => leaf(FermionType.Int32)
        case 4 => leaf(FermionType.Int64)
        case 5 => leaf(FermionType.Float32)
        case 6 => leaf(FermionType.Float64)
        case 7 => leaf(FermionType.Utf8)
        case 8 => leaf(FermionType.Binary)
        case 9 => leaf(FermionType.Date32)
        case 10 => need(1); leaf(FermionType.Timestamp(b.get() != 0))
        case 11 =>
          need(2)
          val p = b.get() & 0xff
          val s = b.get().toInt
          if (p < 1 || p > 38 || s < 0 || s > p) throw new IllegalArgumentException(s"invalid decimal($p,$s) in schema")
          leaf(FermionType.Decimal(p, s))
        case 12 =>
          need(4)
          val n = b.getInt()
          if (n < 0 || n > b.remaining()) throw new IllegalArgumentException(s"struct with $n children in schema")
          FermionField(name, fieldId, FermionType.Struct, nullable, IndexedSeq.fill(n)(node(depth + 1)))
        case 13 => FermionField(name, fieldId, FermionType.List, nullable, IndexedSeq(node(depth + 1)))
        case 14 => FermionField(name, fieldId, FermionType.Map, nullable, IndexedSeq(node(depth + 1), node(depth + 1)))
        case other => throw new IllegalArgumentException(s"unknown type id $other at schema byte ${b.position() - 8}")
      }
    }
    node(0)
  }
}
