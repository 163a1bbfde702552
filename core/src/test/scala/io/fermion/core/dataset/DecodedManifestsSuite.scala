package io.fermion.core.dataset

import java.nio.file.{Files, Paths}

import io.fermion.core.TestFiles
import io.fermion.core.schema.{FermionField, FermionSchema, FermionType}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/** A manifest read again is decoded again only when its bytes changed. */
class DecodedManifestsSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private val schema = FermionSchema(IndexedSeq(FermionField("id", 1, FermionType.Int64, nullable = false)))

  test("the same bytes give the decoded manifest back; other bytes in the same file are decoded") {
    val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-decoded").resolve("t").toUri), conf)
    ds.commit(0, Operation.Create(schema, IndexedSeq.empty, IndexedSeq.empty))
    val first = ds.manifest(1)
    assert(ds.manifest(1) eq first)
    assert(ds.latest().exists(_ eq first))
    // The file rewritten in place (as an external store's recovery may): its new bytes are decoded.
    val file = Paths.get(DatasetLayout.manifest(new Path(ds.name), 1).toUri)
    Files.write(file, ManifestCodec.encode(first.copy(tag = "rewritten")))
    val again = ds.manifest(1)
    assert(!(again eq first) && again.tag == "rewritten" && again == first.copy(tag = "rewritten"))
  }

  test("bytes alone decide: equal bytes under one name reuse, a decode that fails is not kept") {
    val m = Manifest(1, 2, 0, 0, schema, IndexedSeq.empty, 0, 0, "", "create")
    val bytes = ManifestCodec.encode(m)
    var decodes = 0
    def decode(b: Array[Byte]) = DecodedManifests("suite-file", b) { decodes += 1; ManifestCodec.decode(b, "ds", "m") }
    val a = decode(bytes)
    val b = decode(bytes.clone())
    assert((a eq b) && decodes == 1)
    val damaged = bytes.clone(); damaged(damaged.length / 2) = (damaged(damaged.length / 2) ^ 0x5a).toByte
    intercept[InvalidFermionDatasetException](decode(damaged))
    assert(decode(bytes) eq a)
    assert(decodes == 2)
  }
}
