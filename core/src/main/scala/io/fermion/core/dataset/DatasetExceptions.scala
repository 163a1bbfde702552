package io.fermion.core.dataset

import java.io.IOException

/** Base of the errors of the dataset (table) layer; each names the dataset. */
sealed abstract class FermionDatasetException(val dataset: String, message: String, cause: Throwable = null)
    extends IOException(s"$message [dataset=$dataset]", cause)

/** Another writer committed an incompatible change since this one read the dataset (or its
  * transaction file is missing or unknown, which counts as a conflict). Nothing was committed;
  * re-run the operation on the new version. */
final class FermionCommitConflictException(
    dataset: String,
    val readVersion: Long,
    val conflictingVersion: Long,
    reason: String
) extends FermionDatasetException(
      dataset,
      s"cannot commit over version $readVersion: version $conflictingVersion $reason"
    )

/** A version, timestamp or tag that names no version of the dataset. */
final class FermionVersionNotFoundException(dataset: String, what: String)
    extends FermionDatasetException(dataset, what)

/** A manifest, transaction or deletion file that cannot be decoded. */
final class InvalidFermionDatasetException(dataset: String, file: String, message: String, cause: Throwable = null)
    extends FermionDatasetException(dataset, s"$file: $message", cause)

/** A path that holds no Fermion dataset (nor loose Fermion files) where one is needed. */
final class FermionDatasetNotFoundException(dataset: String, why: String)
    extends FermionDatasetException(dataset, why)

/** A row asked for by address, row id or position that the version does not hold (deleted, past
  * the end, or in a fragment the version does not have). */
final class FermionRowNotFoundException(dataset: String, what: String) extends FermionDatasetException(dataset, what)

/** The dataset's storage cannot commit safely as configured: it has no atomic create-if-absent
  * and no external manifest store is set, or a commit-store setting is wrong. The message names the
  * setting to change (`fermion.commitStore`, `fermion.externalStore.dir`, ...). Nothing was
  * committed. */
final class FermionCommitStoreException(dataset: String, message: String, cause: Throwable = null)
    extends FermionDatasetException(dataset, message, cause)
